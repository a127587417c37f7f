"""The standalone script of an item, for a runtime's issue tracker: the model built with
onnx.helper, its literal inputs, the expected outputs (or that the model must be refused) and the
check, which exits 1 on the bug; it needs only numpy, onnx and the runtime. The report writes one
per failure cause it shows, ``conformance repro`` one for any item, the fuzz one per finding."""

from __future__ import annotations

import functools
import shlex
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import onnx
from onnx import helper

from .expand.cache import expand_file
from .expand.items import Item
from .judge.verdict import expected_outputs
from .load.cases import CaseError, bundled_case_dir, case_files, load_registry
from .load.limits import DEFAULT_LIMITS


class ReproError(Exception):
    """The item cannot be found or rebuilt (one line)."""


def command(item_id: str, spec: str, seed: int, case_dir: Path | None) -> str:
    """The command line that writes an item's script (results.json's ``script``)."""
    words = ["conformance", "repro", item_id, f"--backend={spec}", f"--seed={seed}"]
    if case_dir is not None and case_dir.resolve() != bundled_case_dir().resolve():
        words.append(f"--cases={case_dir}")
    return shlex.join(words)


def find_item(item_id: str, case_dir: Path, record: dict[str, Any] | None = None,
              items_of: Callable[[Path], Iterable[Item]] | None = None) -> Item:
    """The item, from the record's case file when known (one file to expand), else from all;
    ``items_of``: a file's items where they are at hand (a run's expansion cache)."""
    if not case_dir.is_dir():
        raise ReproError(f"--cases {case_dir}: not a directory")
    try:
        if items_of is None:
            registry = load_registry(case_dir)
            items_of = functools.partial(expand_file, registry=registry, limits=DEFAULT_LIMITS)
        files = case_files(case_dir)
        if record and record.get("file"):
            named = case_dir.parent / record["file"]
            files = [named] if named.is_file() else files
        for file in files:
            for item in items_of(file):
                if item.id == item_id:
                    return item
    except CaseError as e:
        raise ReproError(str(e).splitlines()[0]) from None
    raise ReproError(f"no item {item_id} in {case_dir} (ids as in the report: Op-version/case[element type])")


def item_script(item: Item, backend: str, seed: int, record: dict[str, Any] | None = None) -> str:
    kind = "must be refused" if item.case.reject else f"expected outputs {item.expectation}"
    about = [f"{item.id}: {kind} ({item.case.file.name}:{item.case.line})", "",
             f"A maxpool-conformance item ({item.case.description}), for {backend}, inputs of seed {seed}.",
             f"Rewrite it with `{command(item.id, backend, seed, None)}`."]
    if record is not None:
        about.append(f"What the suite saw on {record['backend']} {record.get('backend_version', '')}: "
                     f"{record['outcome']}: {record['message'][:400]}")
    return standalone_script(item, item.make_inputs(seed), backend, item.case.reject, about)


RUNNERS = {
    "ort": '''def run(model, feeds):
    import onnxruntime
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
''',
    "onnx-reference": '''def run(model, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, feeds)
''',
    "tract": '''def run(model, feeds):
    import tempfile, tract
    with tempfile.TemporaryDirectory() as directory:
        path = directory + "/model.onnx"
        onnx.save(model, path)
        arrays = [feeds[i.name] for i in model.graph.input]
        loaded = tract.onnx().load(path)
        for index, array in enumerate(arrays):
            loaded.set_input_fact(index, ",".join([*map(str, array.shape), TRACT_TYPES[array.dtype.name]]))
        return [o.to_numpy() for o in loaded.into_model().into_runnable().run(arrays)]


TRACT_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "uint8": "u8", "int32": "i32",
               "int64": "i64"}
''',
    "openvino": '''def run(model, feeds):
    import tempfile, openvino
    core = openvino.Core()
    with tempfile.TemporaryDirectory() as directory:
        path = directory + "/model.onnx"
        onnx.save(model, path)
        compiled = core.compile_model(core.read_model(path), "CPU")
    request = compiled.create_infer_request()
    request.infer([feeds[i.name] for i in model.graph.input])
    return [request.get_output_tensor(i).data.copy() for i in range(len(compiled.outputs))]
''',
    "openvino-native": '''def run(model, feeds):
    # OpenVINO's own MaxPool, built with its Python API from the node's attributes
    import openvino
    (node,) = model.graph.node
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    a = {k: v.decode() if isinstance(v, bytes) else v for k, v in a.items()}
    x = feeds[model.graph.input[0].name]
    version = model.opset_import[0].version
    opset = openvino.opset14 if version >= 14 else openvino.opset8 if version >= 8 else openvino.opset1
    data = opset.parameter(list(x.shape), openvino.Type(x.dtype), name="X")
    common = dict(strides=a["strides"], pads_begin=a["pads_begin"], pads_end=a["pads_end"], kernel_shape=a["kernel"],
                  rounding_type=a.get("rounding_type", "floor"), auto_pad=a.get("auto_pad", "explicit"))
    if version >= 8:
        pool = opset.max_pool(data, dilations=a.get("dilations", [1] * len(a["kernel"])),
                              index_element_type=a.get("index_element_type", "i64"), axis=a.get("axis", 0), **common)
    else:
        pool = opset.max_pool(data, **common)
    built = openvino.Model([pool.output(i) for i in range(len(node.output))], [data], "max_pool")
    request = openvino.Core().compile_model(built, "CPU").create_infer_request()
    request.infer([x])
    return [request.get_output_tensor(i).data.copy() for i in range(len(node.output))]
''',
    "tinygrad": '''def run(model, feeds):
    import tempfile
    from tinygrad import dtypes
    from tinygrad.nn.onnx import OnnxRunner
    with tempfile.TemporaryDirectory() as directory:
        path = directory + "/model.onnx"
        onnx.save(model, path)
        outputs = [OnnxRunner(path)(feeds)[o.name] for o in model.graph.output]
    # Tensor.numpy() gives bfloat16 as float32 (exactly): back to the declared type
    return [t.numpy().astype(ml_dtypes.bfloat16) if t.dtype == dtypes.bfloat16 else t.numpy() for t in outputs]
''',
    "onnx2torch": '''def run(model, feeds):
    import torch
    from onnx2torch import convert
    with torch.no_grad():
        outputs = convert(model)(*[torch.from_numpy(np.ascontiguousarray(feeds[i.name])) for i in model.graph.input])
    return [o.numpy() for o in (outputs if isinstance(outputs, (tuple, list)) else [outputs])]
''',
}
# A backend the scripts have no runner of their own for (``package.module:Class``, or a name another
# package registers): the script imports it as the suite would, an onnx Backend or a class with the
# suite's interface, so that it runs the vendor's own adapter with no stub to fill in.
ADAPTER_RUNNER = '''ADAPTER = {adapter!r}


def run(model, feeds):
    import importlib
    if ADAPTER["path"] and ADAPTER["path"] not in sys.path:
        sys.path.insert(0, ADAPTER["path"])
{find}
    from onnx.backend.base import Backend
    if isinstance(target, type) and issubclass(target, Backend):
        device = ADAPTER["options"].get("device", "CPU")
        return target.prepare(model, device=device).run([feeds[i.name] for i in model.graph.input])
    backend = target(**ADAPTER["options"]) if isinstance(target, type) else target
    return backend.run(model, feeds)
'''
FIND_BY_PATH = '''    module, _, name = ADAPTER["target"].partition(":")
    target = getattr(importlib.import_module(module), name)'''
FIND_BY_ENTRY_POINT = '''    import importlib.metadata
    group = importlib.metadata.entry_points(group=ADAPTER["group"])
    (target,) = [e.load() for e in group if e.name == ADAPTER["name"]]'''
GENERIC_RUNNER = '''class RunNotFilledIn(Exception):
    """The script cannot judge a runtime it does not run: neither a refusal nor a bug."""


def run(model, feeds):
    raise RunNotFilledIn("fill in run(): run the model on your runtime and return its outputs in order")
'''
# A stub's exception is no refusal: the script says so and exits 2, never "refused, as it should".
_NOT_FILLED_IN = """    if type(e).__name__ == 'RunNotFilledIn':
        print(e)
        sys.exit(2)
"""


def standalone_script(item: Item, inputs: dict[str, np.ndarray], backend: str, reject: str | None,
                      about: list[str]) -> str:
    """A script that needs only numpy, onnx and the runtime: the model built with onnx.helper, the
    literal inputs, the expected outputs (or that the model must be refused) and the check, which
    exits 1 on the bug. ``backend``: whose runtime it runs (others get a stub to fill in);
    ``about``: the lines its docstring opens with."""
    runtime = backend.partition("[")[0]
    if runtime == "openvino" and item.case.domain == "org.openvinotoolkit":
        runtime = "openvino-native"
    needs_bfloat16 = any(a.dtype.name == "bfloat16" for a in inputs.values())
    source = None if reject else ("the documents' own (transcribed, or worked out by hand)" if item.expectation == "literal"
                                  else "the maxpool-conformance reference backend's")
    lines = _repro_header(about, source, needs_bfloat16)
    lines += _model_code(item.model, inputs)
    lines += ["", "", RUNNERS.get(runtime) or _adapter_runner(backend), ""]
    if reject:
        lines += [f"# The model is invalid ({reject}): a conforming runtime refuses it.", REFUSAL_CHECK]
    else:
        expected = expected_outputs(item, inputs)
        lines += ["expected = {", *(f"    {o.name!r}: {_array_code(expected[o.name])}," for o in item.outputs), "}", "",
                  OUTPUT_CHECK]
    return "\n".join(lines) + "\n"


def adapter_directory(spec: str) -> str | None:
    """The directory a ``package.module:Class`` backend is imported from (repro lines and scripts
    put it on the path, so that they run from anywhere); None for a registered name, or where the
    module cannot be found here."""
    from importlib.util import find_spec

    module, colon, _ = spec.partition("[")[0].partition(":")
    if not colon:
        return None
    try:
        found = find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.origin or not Path(found.origin).is_file():
        return None
    directory = Path(found.origin).resolve().parent
    for _part in module.split(".")[1:]:
        directory = directory.parent
    return str(directory)


def _adapter_runner(spec: str) -> str:
    """The runner that imports ``spec``'s adapter (a ``module:Class``, or a registered name the
    scripts have no runner of their own for); the stub only where neither can be found here."""
    from importlib.metadata import entry_points

    base, _, inside = spec.partition("[")
    options = dict(pair.partition("=")[::2] for pair in inside.rstrip("]").split(",") if "=" in pair)
    colon = ":" in base
    path = adapter_directory(spec) if colon else None
    if colon and path is None:
        return GENERIC_RUNNER
    if not colon and not any(e.name == base for e in entry_points(group="conformance.backends")):
        return GENERIC_RUNNER
    adapter: dict[str, Any] = {"target": base, "path": path} if colon else {"name": base, "group": "conformance.backends"}
    adapter["options"] = {k.strip(): v.strip() for k, v in options.items()}
    return ADAPTER_RUNNER.format(adapter=adapter, find=FIND_BY_PATH if colon else FIND_BY_ENTRY_POINT)


def _repro_header(about: list[str], source: str | None, needs_bfloat16: bool) -> list[str]:
    lines = ["#!/usr/bin/env python3", f'"""{about[0]}', *about[1:]]
    if source:
        lines.append(f"Expected outputs are {source} (exact: max pooling selects an input element, so outputs "
                     "compare bit for bit; an index may name any element equal to its window's maximum).")
    lines += [f'Needs only numpy, onnx{", ml_dtypes" if needs_bfloat16 else ""} and the runtime."""', "",
              "import sys", "", "import numpy as np", "import onnx", "from onnx import TensorProto, helper"]
    if needs_bfloat16:
        lines.append("import ml_dtypes")
    return lines + ["", ""]


def _model_code(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[str]:
    """Python that rebuilds ``model`` with onnx.helper, and its feeds."""
    nodes = []
    for node in model.graph.node:
        attributes = {a.name: _attribute_value(helper.get_attribute_value(a)) for a in node.attribute}
        shown = _finite_repr(attributes)  # an activation's bound may be infinite: float('inf') reads back
        nodes.append(f"    helper.make_node({node.op_type!r}, {list(node.input)!r}, {list(node.output)!r}, "
                     f"domain={node.domain!r}, **{shown}),")

    def value_info(v: onnx.ValueInfoProto, shape: list[int] | None) -> str:
        return (f"helper.make_tensor_value_info({v.name!r}, TensorProto."
                f"{onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type)}, {shape!r})")

    graph_inputs = ", ".join(value_info(v, list(inputs[v.name].shape)) for v in model.graph.input)
    # the outputs' shapes as the item declares them (symbolic dims): onnx.checker's full check wants one
    graph_outputs = ", ".join(value_info(v, [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim])
                              for v in model.graph.output)
    imports = ", ".join(f"helper.make_opsetid({o.domain!r}, {o.version})" for o in model.opset_import)
    lines = ["graph = helper.make_graph([", *nodes, f"], 'repro', [{graph_inputs}], [{graph_outputs}])",
             f"model = helper.make_model(graph, opset_imports=[{imports}], ir_version={model.ir_version})", ""]
    lines += [f"{name} = {_array_code(array)}" for name, array in inputs.items()]
    return lines + ["feeds = {" + ", ".join(f"{name!r}: {name}" for name in inputs) + "}"]


REFUSAL_CHECK = """try:
    outputs = run(model, feeds)
except Exception as e:
""" + _NOT_FILLED_IN + """    print('refused, as it should:', type(e).__name__, str(e).splitlines()[0] if str(e) else '')
    sys.exit(0)
print('BUG: the runtime ran an invalid model and returned', [getattr(o, 'shape', o) for o in outputs])
sys.exit(1)"""

OUTPUT_CHECK = """try:
    outputs = run(model, feeds)
except Exception as e:
""" + _NOT_FILLED_IN + """    print('BUG: the runtime refuses a valid model:', type(e).__name__, e)
    sys.exit(1)
outputs = list(outputs)
if len(outputs) != len(expected):
    print(f'BUG: the runtime returns {len(outputs)} outputs for a model that declares {len(expected)}:', list(expected))
    sys.exit(1)
failed = False
for (name, want), got in zip(expected.items(), outputs):
    got = np.asarray(got)
    same = got.dtype == want.dtype and got.shape == want.shape and (
        np.array_equal(got.view(f'u{got.itemsize}'), want.view(f'u{want.itemsize}'))
        or (got.dtype.kind == 'f' and np.array_equal(got, want, equal_nan=True)
            and np.array_equal(np.signbit(got), np.signbit(want))))
    if not same and name == 'Indices' and got.shape == want.shape:
        print('Indices differ from the expected ones; with tied maxima another index can be right too')
    print(f'{name}: expected {want.dtype}{list(want.shape)}', want.ravel().tolist()[:64])
    print(f'{name}: got      {got.dtype}{list(got.shape)}', got.ravel().tolist()[:64])
    failed |= not same
print('MISMATCH' if failed else 'as expected')
sys.exit(1 if failed else 0)"""


def _attribute_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_attribute_value(v) for v in value]
    return value


def _finite_repr(value: Any) -> str:
    """``repr(value)`` that Python reads back where it holds an infinite or NaN float."""
    if isinstance(value, float) and not np.isfinite(value):
        return f"float({repr(value)!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_finite_repr(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_finite_repr(v) for v in value) + "]"
    return repr(value)


def _array_code(array: np.ndarray) -> str:
    name = array.dtype.name
    dtype = "ml_dtypes.bfloat16" if name == "bfloat16" else f"np.{name}"
    values = array.astype(np.float64).ravel().tolist() if array.dtype.kind == "f" or name == "bfloat16" \
        else array.ravel().tolist()
    text = repr(values).replace("nan", "float('nan')").replace("inf", "float('inf')")
    return f"np.array({text}, dtype={dtype}).reshape({list(array.shape)!r})"

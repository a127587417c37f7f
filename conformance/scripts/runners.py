"""How a standalone script runs its model: a runner per runtime the suite knows, one that imports
a vendor's own adapter (``package.module:Class`` or a registered name), and a stub to fill in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
NOT_FILLED_IN = """    if type(e).__name__ == 'RunNotFilledIn':
        print(e)
        sys.exit(2)
"""

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


def adapter_runner(spec: str) -> str:
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

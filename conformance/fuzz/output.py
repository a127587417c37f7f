"""What a fuzz run leaves behind: each cluster as a ready-to-commit case (one YAML file per
operator, loadable with ``--cases``), a standalone repro script per cluster, and the run's
section of results.json with the minimal items as records."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import yaml
from onnx import helper

from ..judge.verdict import expected_outputs
from ..expand.items import Item, qualified_op
from ..report.writer import json_safe, write_atomically
from .cases import file_document, materialize
from .engine import Cluster, FuzzRun

CASES_DIR = "cases"
REPRO_DIR = "repro"


def cluster_name(cluster: Cluster) -> str:
    digest = hashlib.sha1(repr(cluster.signature).encode()).hexdigest()[:6]
    op = cluster.signature.op.split(".")[-1].lower()
    return f"fuzz_{op}_{cluster.signature.slug()}_{digest}"


def case_of(cluster: Cluster, run: FuzzRun) -> dict[str, Any]:
    signature = cluster.signature
    matters = ", ".join(cluster.matters) or "none of the varied selectors"
    return materialize(
        cluster.config, cluster_name(cluster),
        description=f"the minimal model of a fuzz failure cluster ({signature.kind}) runs as the reference runs it",
        generated=f"Minimal configuration of a failure cluster found by `conformance fuzz --seed {run.seed}` against "
                  f"{run.backend} {run.backend_version} ({cluster.hits} of {run.judged} configurations): "
                  f"{cluster.verdict.message[:300]}. Changing one of these makes it pass: {matters}.",
    )


def case_file_name(domain: str, op: str) -> str:
    """The file of an operator's cases (all its versions)."""
    return f"fuzz_{qualified_op(domain, op).lower().replace('.', '_')}.yaml"


def write_cases(run: FuzzRun, directory: Path) -> list[Path]:
    """One case file per operator, each cluster a case."""
    by_operator: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cluster in run.clusters:
        target = cluster.config["target"]
        by_operator.setdefault((target.domain, target.op), []).append(case_of(cluster, run))
    written = []
    for (domain, op), cases in sorted(by_operator.items()):
        file = directory / CASES_DIR / case_file_name(domain, op)
        header = (f"# Failure clusters of `conformance fuzz` against {run.backend} {run.backend_version} "
                  f"(seed {run.seed}), one minimal case each; outputs are derived by the reference.\n")
        write_atomically(file, header + dump_yaml(file_document(domain, op, cases)))
        written.append(file)
    return written


class _Dumper(yaml.SafeDumper):
    pass


def _flow_lists(dumper: yaml.SafeDumper, data: list):
    nested = any(isinstance(v, (list, dict)) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=not nested or _numbers_only(data))


def _numbers_only(data: Any) -> bool:
    if isinstance(data, list):
        return all(_numbers_only(v) for v in data)
    return isinstance(data, (int, float)) and not isinstance(data, bool)


_Dumper.add_representer(list, _flow_lists)


def dump_yaml(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=110, allow_unicode=True)


# ---- standalone repro scripts ----

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
    opset = openvino.opset8 if version >= 8 else openvino.opset1
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
GENERIC_RUNNER = '''def run(model, feeds):
    raise NotImplementedError("run the model on your runtime here and return its outputs in order")
'''


def repro_script(cluster: Cluster, run: FuzzRun) -> str:
    found = (f"Found by `conformance fuzz --backend={run.backend} --seed={run.seed}` against {run.backend} "
             f"{run.backend_version}, shrunk to a minimal model.")
    seen = f"{cluster.verdict.outcome.value}: {cluster.verdict.message[:400]}"
    return standalone_script(cluster.item, cluster.item.make_inputs(0), run.backend, cluster.config.get("reject"),
                             [cluster.signature.describe(), "", found, f"What the suite saw: {seen}"])


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
    lines += ["", "", RUNNERS.get(runtime, GENERIC_RUNNER), ""]
    if reject:
        lines += [f"# The model is invalid ({reject}): a conforming runtime refuses it.", REFUSAL_CHECK]
    else:
        expected = expected_outputs(item, inputs)
        lines += ["expected = {", *(f"    {o.name!r}: {_array_code(expected[o.name])}," for o in item.outputs), "}", "",
                  OUTPUT_CHECK]
    return "\n".join(lines) + "\n"


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
        nodes.append(f"    helper.make_node({node.op_type!r}, {list(node.input)!r}, {list(node.output)!r}, "
                     f"domain={node.domain!r}, **{attributes!r}),")

    def value_info(v: onnx.ValueInfoProto, shape: list[int] | None) -> str:
        return (f"helper.make_tensor_value_info({v.name!r}, TensorProto."
                f"{onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type)}, {shape!r})")

    graph_inputs = ", ".join(value_info(v, list(inputs[v.name].shape)) for v in model.graph.input)
    graph_outputs = ", ".join(value_info(v, None) for v in model.graph.output)
    imports = ", ".join(f"helper.make_opsetid({o.domain!r}, {o.version})" for o in model.opset_import)
    lines = ["graph = helper.make_graph([", *nodes, f"], 'repro', [{graph_inputs}], [{graph_outputs}])",
             f"model = helper.make_model(graph, opset_imports=[{imports}], ir_version={model.ir_version})", ""]
    lines += [f"{name} = {_array_code(array)}" for name, array in inputs.items()]
    return lines + ["feeds = {" + ", ".join(f"{name!r}: {name}" for name in inputs) + "}"]


REFUSAL_CHECK = """try:
    outputs = run(model, feeds)
except Exception as e:
    print('refused, as it should:', type(e).__name__, str(e).splitlines()[0] if str(e) else '')
    sys.exit(0)
print('BUG: the runtime ran an invalid model and returned', [getattr(o, 'shape', o) for o in outputs])
sys.exit(1)"""

OUTPUT_CHECK = """try:
    outputs = run(model, feeds)
except Exception as e:
    print('BUG: the runtime refuses a valid model:', type(e).__name__, e)
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


def _array_code(array: np.ndarray) -> str:
    name = array.dtype.name
    dtype = "ml_dtypes.bfloat16" if name == "bfloat16" else f"np.{name}"
    values = array.astype(np.float64).ravel().tolist() if array.dtype.kind == "f" or name == "bfloat16" \
        else array.ravel().tolist()
    text = repr(values).replace("nan", "float('nan')").replace("inf", "float('inf')")
    return f"np.array({text}, dtype={dtype}).reshape({list(array.shape)!r})"


def write_repros(run: FuzzRun, directory: Path) -> list[Path]:
    written = []
    for cluster in run.clusters:
        file = directory / REPRO_DIR / f"{cluster_name(cluster)}.py"
        write_atomically(file, repro_script(cluster, run))
        written.append(file)
    return written


# ---- results.json ----

def fuzz_section(run: FuzzRun, directory: Path | None) -> dict[str, Any]:
    """The run's entry in results.json's ``fuzz`` list."""
    def where(kind: str, cluster: Cluster) -> str | None:
        if directory is None:
            return None
        if kind == REPRO_DIR:
            return (directory / REPRO_DIR / f"{cluster_name(cluster)}.py").as_posix()
        return (directory / CASES_DIR / case_file_name(cluster.item.case.domain, cluster.item.case.op)).as_posix()

    return {
        "backend": run.backend, "backend_version": run.backend_version, "seed": run.seed, "budget": run.budget,
        "configurations": run.judged, "discarded": run.discarded, "outcomes": dict(sorted(run.outcomes.items())),
        "seconds": round(run.seconds, 3), "per_second": round(run.per_second, 2), "unsupported": run.unsupported,
        "stopped": run.stopped,
        "clusters": [{
            "name": cluster_name(c), "op": c.signature.op, "outcome": c.signature.outcome, "kind": c.signature.kind,
            "dtype": c.signature.dtype, "indices": c.signature.indices, "hits": c.hits,
            "found_after": c.found_after, "found_after_s": c.found_after_s, "message": c.verdict.message,
            "matters": c.matters, "selectors": c.selectors,
            **{k: v for k, v in (("case_file", where(CASES_DIR, c)), ("repro", where(REPRO_DIR, c))) if v},
        } for c in run.clusters],
    }


def run_document(run: FuzzRun, directory: Path | None) -> dict[str, Any]:
    """What results.json keeps of a run, JSON-safe: it travels from a pytest-xdist worker to the
    controller that writes the report."""
    return {"records": records(run), "section": fuzz_section(run, directory)}


def records(run: FuzzRun) -> list[dict[str, Any]]:
    """Each cluster's minimal item as a results.json record."""
    found = []
    for c in run.clusters:
        item, case = c.item, c.item.case
        name = cluster_name(c)
        record = {
            "id": item.id.replace("/fuzz[", f"/{name}["), "case": name,
            "file": f"{CASES_DIR}/{case_file_name(case.domain, case.op)}",
            "op": qualified_op(case.domain, case.op), "domain": case.domain, "version": item.version,
            "opset_imports": item.opset_imports,
            "attributes": {k: json_safe(v) for k, v in case.attributes.items()},
            "inputs": [{"name": i.name, "shape": list(i.shape), "dtype": i.dtype.name} for i in item.inputs],
            "expected": item.expectation, "ambiguity": c.verdict.ambiguities, "erratum": None,
            "backend": run.backend, "backend_version": run.backend_version, "outcome": c.verdict.outcome.value,
            "message": c.verdict.message, "repro": f"python {REPRO_DIR}/{name}.py",
        }
        if c.verdict.mismatches:
            record["diff"] = [m.as_json() for m in c.verdict.mismatches]
        found.append(record)
    return found

"""The standalone script of an item, for a runtime's issue tracker: the model built with
onnx.helper, its literal inputs, the expected outputs (or that the model must be refused) and the
check, which exits 1 on the bug; it needs only numpy, onnx and the runtime.

The expected outputs are given, never computed here: the caller takes them from the oracle
(``conformance.judge.oracle.script_values``), whose values the run has cached."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper

from ..expand.items import Item
from .items import command
from .runners import NOT_FILLED_IN, RUNNERS, adapter_runner


def item_script(item: Item, backend: str, seed: int, inputs: dict[str, np.ndarray],
                expected: dict[str, np.ndarray] | None, seen: str | None = None, twin_of: str | None = None) -> str:
    """``inputs`` and ``expected`` (None for an item that must be refused) as the oracle gives them
    at ``seed``; ``seen``: what a run saw, for the docstring; ``twin_of``: the item whose valid
    twin ``item`` is (its script is rewritten from that item's id, with ``--twin``)."""
    kind = "must be refused" if item.case.reject else f"expected outputs {item.expectation}"
    rewrite = command(item.id, backend, seed, None) if twin_of is None else f"{command(twin_of, backend, seed, None)} --twin"
    about = [f"{item.id}: {kind} ({item.case.file.name}:{item.case.line})", "",
             f"A maxpool-conformance item ({item.case.description}), for {backend}, inputs of seed {seed}.",
             f"Rewrite it with `{rewrite}`."]
    if seen is not None:
        about.append(seen)
    return standalone_script(item, inputs, expected, backend, item.case.reject, about)


def standalone_script(item: Item, inputs: dict[str, np.ndarray], expected: dict[str, np.ndarray] | None,
                      backend: str, reject: str | None, about: list[str]) -> str:
    """A script that needs only numpy, onnx and the runtime: the model built with onnx.helper, the
    literal inputs, the expected outputs (or, with ``reject``, that the model must be refused) and
    the check, which exits 1 on the bug. ``backend``: whose runtime it runs (others get a stub to
    fill in); ``about``: the lines its docstring opens with."""
    runtime = backend.partition("[")[0]
    if runtime == "openvino" and item.case.domain == "org.openvinotoolkit":
        runtime = "openvino-native"
    needs_bfloat16 = any(a.dtype.name == "bfloat16" for a in inputs.values())
    source = None if reject else ("the documents' own (transcribed, or worked out by hand)" if item.expectation == "literal"
                                  else "the maxpool-conformance reference backend's")
    lines = _repro_header(about, source, needs_bfloat16)
    lines += _model_code(item.model, inputs)
    lines += ["", "", RUNNERS.get(runtime) or adapter_runner(backend), ""]
    if reject:
        lines += [f"# The model is invalid ({reject}): a conforming runtime refuses it.", REFUSAL_CHECK]
    else:
        assert expected is not None, "a script that checks outputs is given them"
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
""" + NOT_FILLED_IN + """    print('refused, as it should:', type(e).__name__, str(e).splitlines()[0] if str(e) else '')
    sys.exit(0)
print('BUG: the runtime ran an invalid model and returned', [getattr(o, 'shape', o) for o in outputs])
sys.exit(1)"""

OUTPUT_CHECK = """try:
    outputs = run(model, feeds)
except Exception as e:
""" + NOT_FILLED_IN + """    print('BUG: the runtime refuses a valid model:', type(e).__name__, e)
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

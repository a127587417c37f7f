"""Stage 2 of the pipeline: expand each case into items, one ONNX model per legal version.

A case applies at a version when that version has every attribute, input and output the case
uses and accepts its element types; elsewhere it is not generated (it does not *fail*). A
must-reject case is generated exactly at the versions it names, since being illegal there is
its point.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import onnx
from onnx import helper

from .cases import Case, InputSpec, OutputSpec
from .dtypes import DTYPES, DType
from .operators import OpVersion, operators

ONNX_DOMAIN = "ai.onnx"
ATTRIBUTE_KIND = {
    onnx.AttributeProto.INT: "int", onnx.AttributeProto.INTS: "ints", onnx.AttributeProto.FLOAT: "float",
    onnx.AttributeProto.FLOATS: "floats", onnx.AttributeProto.STRING: "string",
    onnx.AttributeProto.STRINGS: "strings",
}


@dataclass(frozen=True)
class ItemInput:
    name: str
    dtype: DType
    shape: tuple[int, ...]
    spec: InputSpec


@dataclass(frozen=True)
class ItemOutput:
    name: str
    dtype: DType
    expected: np.ndarray | None  # None: derived from the reference backend
    positions_of: str | None = None


@dataclass
class Item:
    """One model, its inputs and what a conforming backend must do with it."""

    id: str
    case: Case
    signature: OpVersion
    dtype: str
    inputs: tuple[ItemInput, ...]
    outputs: tuple[ItemOutput, ...]

    @property
    def version(self) -> int:
        return self.signature.version

    @property
    def expectation(self) -> str:
        if self.case.reject:
            return "reject"
        return "derived" if any(o.expected is None for o in self.outputs) else "literal"

    @property
    def opset_imports(self) -> dict[str, int]:
        return {self.case.domain: self.version}

    @cached_property
    def model(self) -> onnx.ModelProto:
        model = build_model(self)
        if not self.case.reject:
            try:
                onnx.checker.check_model(model, full_check=True)
            except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
                raise self.case.error((), f"{self.id}: the model fails onnx.checker: {e}") from None
        return model

    def make_inputs(self, seed: int) -> dict[str, np.ndarray]:
        arrays = {}
        for port in self.inputs:
            spec = port.spec
            if spec.random is None:
                arrays[port.name] = port.dtype.cast(spec.data)
            else:
                key = f"{self.case.file.stem}/{self.case.name}/{port.name}/{port.dtype.name}"
                rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
                arrays[port.name] = generate(spec.random, port.dtype, rng)
        return arrays


def expand(case: Case) -> list[Item]:
    operator = operators()[case.domain, case.op]
    selected = _selected_versions(case, sorted(operator.versions))
    items = []
    for version in selected:
        signature = operator.versions[version]
        made = [_item(case, signature, dtype) for dtype in _dtype_sweep(case, signature)]
        applicable = [item for item in made if isinstance(item, Item)]
        if not applicable and isinstance(case.versions, list):
            raise case.error(("versions",), f"the case names {case.op}-{version}, where it does not apply: {made[0]}")
        items += applicable
    if not items:
        raise case.error((), f"the case applies at no version of {case.op}")
    return items


def _selected_versions(case: Case, versions: list[int]) -> list[int]:
    if isinstance(case.versions, list):
        return sorted(case.versions)
    if isinstance(case.versions, dict):
        low, high = case.versions["from"], case.versions.get("to", versions[-1])
        return [v for v in versions if low <= v <= high]
    return versions


def _dtype_sweep(case: Case, signature: OpVersion) -> list[str | None]:
    """Element types for the inputs that declare none (None: every input declares its own)."""
    if case.dtypes is None:
        return [None]
    first = signature.port(case.inputs[0].name)
    allowed = signature.allowed(first) if first else ()
    return list(allowed) if case.dtypes == "all" else list(case.dtypes)


def _item(case: Case, signature: OpVersion, sweep: str | None) -> Item | str:
    """The item, or why the case does not apply at this version and element type."""
    binding: dict[str, str] = {}
    inputs = []
    for spec in case.inputs:
        name = spec.dtype or sweep
        if name is None:
            raise case.error(("inputs", spec.name), "needs a dtype, or the case needs `dtypes`")
        port = signature.port(spec.name)
        if port is None or port not in signature.inputs:
            if case.reject:
                raise case.error(("inputs", spec.name), f"{case.op}-{signature.version} has no input {spec.name}")
            return f"{case.op}-{signature.version} has no input {spec.name}"
        if binding.setdefault(port.type, name) != name and not case.reject:
            return f"inputs of type {port.type} differ in element type"
        inputs.append(ItemInput(spec.name, DTYPES[name], spec.shape, spec))

    reason = None if case.reject else _not_applicable(case, signature, binding)
    if reason:
        return reason
    _check_attribute_kinds(case, signature)
    for item_input in inputs:
        _check_input_values(case, item_input)

    outputs = []
    declared = case.outputs or tuple(OutputSpec(p.name, None) for p in signature.outputs if not p.optional)
    for spec in declared:
        # A must-reject case may name an output its version lacks: type it as a version that has it.
        owner = signature if signature.port(spec.name) else next(
            v for v in operators()[case.domain, case.op].versions.values() if v.port(spec.name))
        port = owner.port(spec.name)
        dtype = binding.get(port.type) or _only_type(case, owner, port.type, spec.name)
        if spec.dtype is not None and spec.dtype != dtype:
            raise case.error(("outputs", spec.name, "dtype"), f"is {spec.dtype} but {port.type} is {dtype} here")
        expected = None
        if spec.data is not None:
            try:
                expected = DTYPES[dtype].cast(spec.data)
            except ValueError as e:
                raise case.error(("outputs", spec.name, "data"), str(e)) from None
        outputs.append(ItemOutput(spec.name, DTYPES[dtype], expected, port.positions_of))

    dtype_label = inputs[0].dtype.name
    item_id = f"{qualified_op(case.domain, case.op)}-{signature.version}/{case.name}[{dtype_label}]"
    return Item(item_id, case, signature, dtype_label, tuple(inputs), tuple(outputs))


def qualified_op(domain: str, op: str) -> str:
    return op if domain == ONNX_DOMAIN else f"{domain}.{op}"


def _not_applicable(case: Case, signature: OpVersion, binding: dict[str, str]) -> str | None:
    for name in case.attributes:
        if name not in signature.attributes:
            return f"{case.op}-{signature.version} has no attribute {name}"
    for spec in case.outputs:
        port = signature.port(spec.name)
        if port is None or port not in signature.outputs:
            return f"{case.op}-{signature.version} has no output {spec.name}"
    for type_var, dtype in binding.items():
        if dtype not in signature.types[type_var]:
            return f"{case.op}-{signature.version} does not accept {dtype} for {type_var}"
    for port in signature.inputs:
        if not port.optional and port.name not in {i.name for i in case.inputs}:
            raise case.error(("inputs",), f"{case.op}-{signature.version} requires input {port.name}")
    for name in signature.required:
        if name not in case.attributes:
            raise case.error(("attributes",), f"{case.op}-{signature.version} requires attribute {name}")
    return None


def _check_attribute_kinds(case: Case, signature: OpVersion) -> None:
    if case.reject:
        return
    for name, value in case.attributes.items():
        kind = ATTRIBUTE_KIND.get(helper.make_attribute(name, value).type)
        if kind != signature.attributes[name]:
            raise case.error(("attributes", name), f"must be {signature.attributes[name]}, not {kind}")


def _check_input_values(case: Case, item_input: ItemInput) -> None:
    spec, dtype = item_input.spec, item_input.dtype
    where = ("inputs", spec.name)
    if spec.random is None:
        try:
            dtype.cast(spec.data)
        except ValueError as e:
            raise case.error(where + ("data",), str(e)) from None
        return
    distribution = spec.random["distribution"]
    if dtype.is_integer and (distribution == "normal" or (isinstance(distribution, dict) and "uniform" in distribution)):
        raise case.error(where + ("random", "distribution"), f"{distribution} gives non-integers; {dtype.name} needs integers, choice or permutation")
    if isinstance(distribution, dict) and ("integers" in distribution or "choice" in distribution):
        values = distribution.get("integers") or distribution["choice"]
        try:
            dtype.cast(values)
        except ValueError as e:
            raise case.error(where + ("random", "distribution"), str(e)) from None


def _only_type(case: Case, signature: OpVersion, type_var: str, name: str) -> str:
    allowed = signature.types[type_var]
    if len(allowed) != 1:
        raise case.error(("outputs", name), f"cannot tell the element type of {name}: {type_var} is unbound")
    return allowed[0]


def generate(random: dict[str, Any], dtype: DType, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(random["shape"])
    count = int(np.prod(shape, dtype=np.int64))
    distribution = random["distribution"]
    if distribution == "normal":
        values = rng.standard_normal(count)
    elif distribution == "permutation":
        values = rng.permutation(count)
        if dtype.is_integer:
            info = np.iinfo(dtype.numpy)
            values = values % (int(info.max) - int(info.min) + 1) + int(info.min)
        else:
            values = values - count // 2
    elif distribution == "integers" or "integers" in distribution:
        if distribution == "integers":
            info = np.iinfo(dtype.numpy) if dtype.is_integer else np.iinfo(np.int8)
            low, high = int(info.min), int(info.max)
        else:
            low, high = distribution["integers"]
        values = rng.integers(low, high, size=count, endpoint=True)
    elif "uniform" in distribution:
        values = rng.uniform(*distribution["uniform"], size=count)
    else:
        values = rng.choice(np.array(distribution["choice"], dtype=np.float64), size=count)
    return dtype.cast(values).reshape(shape)


def _port_order(item: Item, signature: OpVersion) -> list[str]:
    """The node's outputs in signature order ("" for a skipped optional one); outputs a
    must-reject case adds beyond the signature come last."""
    named = [o.name for o in item.outputs]
    ordered = [p.name if p.name in named else "" for p in signature.outputs]
    return ordered + [name for name in named if name not in ordered]


def build_model(item: Item) -> onnx.ModelProto:
    signature, case = item.signature, item.case
    provided = {i.name for i in item.inputs}
    node_inputs = [p.name if p.name in provided else "" for p in signature.inputs]
    node_outputs = _port_order(item, signature)
    for names in (node_inputs, node_outputs):
        while names and not names[-1]:
            names.pop()
    rank = len(item.inputs[0].shape)
    onnx_domain = "" if case.domain == ONNX_DOMAIN else case.domain
    node = helper.make_node(case.op, node_inputs, node_outputs, domain=onnx_domain, **case.attributes)
    graph = helper.make_graph(
        [node],
        f"{case.op}_{case.name}",
        [helper.make_tensor_value_info(i.name, i.dtype.onnx, i.shape) for i in item.inputs],
        # Output dims stay symbolic: the expectation, not onnx's shape inference, decides them.
        [helper.make_tensor_value_info(o.name, o.dtype.onnx, [f"{o.name}_{d}" for d in range(rank)])
         for o in item.outputs],
    )
    imports = [helper.make_opsetid(onnx_domain, item.version)]
    return helper.make_model(
        graph,
        opset_imports=imports,
        ir_version=helper.find_min_ir_version_for(imports),
        producer_name="maxpool-conformance",
    )


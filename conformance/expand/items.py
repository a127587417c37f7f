"""Stage 2 of the pipeline: expand each case into items, one ONNX model per legal version.

A case applies at a version when that version has every attribute, input and output the case
uses and accepts its element types; elsewhere it is not generated (it does not *fail*). A
must-reject case is generated exactly at the versions it names, since being illegal there is
its point.

Cases are written channels-first, (N, C, spatial...). For an operator that is channels_last
(operators.yaml), the model's tensors are (N, spatial..., C): the expansion transposes the
inputs and the literal outputs, except Indices, which stay as ai.onnx MaxPool gives them:
channels-first, positions in the channels-first input (``nhwc-indices`` in the registry).
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ..load.cases import Ambiguity, Case, CaseError, InputSpec, OutputSpec, case_files, load_case_file, load_registry
from ..load import value_classes
from ..load.dtypes import DTYPES, DType
from ..load.operators import OpVersion, operators

ONNX_DOMAIN = "ai.onnx"
CHANNELS_LAST = "channels_last"
ATTRIBUTE_KIND = {
    onnx.AttributeProto.INT: "int", onnx.AttributeProto.INTS: "ints", onnx.AttributeProto.FLOAT: "float",
    onnx.AttributeProto.FLOATS: "floats", onnx.AttributeProto.STRING: "string",
    onnx.AttributeProto.STRINGS: "strings",
}


@dataclass(frozen=True)
class ItemInput:
    name: str
    dtype: DType
    shape: tuple[int, ...]  # the model's (channels-last for such an operator); spec.shape is the case's
    spec: InputSpec


@dataclass(frozen=True)
class ItemOutput:
    name: str
    dtype: DType
    expected: np.ndarray | None  # None: derived from the reference backend
    positions_of: str | None = None
    shape: tuple[int, ...] | None = None  # documented without values: the derived output must have it


@dataclass
class Item:
    """One model, its inputs and what a conforming backend must do with it."""

    id: str
    case: Case
    signature: OpVersion
    dtype: str
    inputs: tuple[ItemInput, ...]  # the graph inputs: the upstream node's first
    outputs: tuple[ItemOutput, ...]
    upstream: OpVersion | None = None
    layout: str = "channels_first"
    # A must-reject model outside its version's signature (an attribute, port or element type the
    # version lacks, a required one missing, an attribute of the wrong kind): what a check against
    # the operator's schema refuses, whatever the values. None where only values break the rule.
    breach: str | None = None

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
        """The inputs as the model takes them."""
        return self.to_model(self.case_inputs(seed))

    def to_model(self, written: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Inputs as the case writes them -> as the model takes them."""
        return {name: stored(array, self.layout) for name, array in written.items()}

    def case_inputs(self, seed: int) -> dict[str, np.ndarray]:
        """The inputs as the case writes them, channels-first."""
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


def load_items(case_dir: Path, registry: dict[str, Ambiguity] | None = None) -> list[Item]:
    """Every item of the case files in ``case_dir``, in file and case order (``registry``: by
    default the bundled registry extended by the directory's own)."""
    registry = load_registry(case_dir) if registry is None else registry
    return [item for file in case_files(case_dir) for case in load_case_file(file, registry) for item in expand(case)]


def stored(array: np.ndarray, layout: str) -> np.ndarray:
    """A channels-first tensor as an operator of ``layout`` takes it."""
    return np.ascontiguousarray(np.moveaxis(array, 1, -1)) if layout == CHANNELS_LAST and array.ndim > 2 else array


def stored_shape(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
    return tuple(shape[:1]) + tuple(shape[2:]) + tuple(shape[1:2]) if layout == CHANNELS_LAST and len(shape) > 2 else tuple(shape)


def expand(case: Case) -> list[Item]:
    operator = operators()[case.domain, case.op]
    selected = _selected_versions(case, sorted(operator.versions))
    items = []
    for version in selected:
        signature = operator.versions[version]
        upstream = _upstream_signature(case, version)
        made = [_item(case, signature, upstream, dtype) for dtype in _dtype_sweep(case, signature, upstream)]
        applicable = [item for item in made if isinstance(item, Item)]
        if not applicable and isinstance(case.versions, list) and not case.derived_from:
            raise case.error(("versions",), f"the case names {case.op}-{version}, where it does not apply: {made[0]}")
        items += applicable
    if not items and not case.derived_from:  # a derived case may apply nowhere for this operator
        if case.versions is not None:
            raise case.error(("versions",), f"selects no version of {case.op} where the case applies")
        raise case.error((), f"the case applies at no version of {case.op}")
    return items


def _selected_versions(case: Case, versions: list[int]) -> list[int]:
    if isinstance(case.versions, list):
        return sorted(case.versions)
    if isinstance(case.versions, dict):
        low, high = case.versions["from"], case.versions.get("to", versions[-1])
        return [v for v in versions if low <= v <= high]
    return versions


def _upstream_signature(case: Case, opset: int) -> OpVersion | None:
    """The version of the upstream operator that the same opset import selects."""
    if case.upstream is None:
        return None
    versions = operators()[case.domain, case.upstream.op].versions
    chosen = [v for v in versions if v <= opset]
    return versions[max(chosen)] if chosen else None


def _dtype_sweep(case: Case, signature: OpVersion, upstream: OpVersion | None) -> list[str | None]:
    """Element types for the inputs that declare none (None: every input declares its own)."""
    if case.dtypes is None:
        return [None]
    if case.dtypes != "all":
        return list(case.dtypes)
    node, specs = (upstream, case.upstream.inputs) if case.upstream else (signature, case.inputs)
    first = node.port(specs[0].name) if node else None
    return list(node.allowed(first)) if first and node else []


def _item(case: Case, signature: OpVersion, upstream: OpVersion | None, sweep: str | None) -> Item | str:
    """The item, or why the case does not apply at this version and element type."""
    layout = operators()[case.domain, case.op].layout
    inputs: list[ItemInput] = []
    binding: dict[str, str] = {}
    fed: set[str] = set()
    if case.upstream:
        reason = _bind_upstream(case, signature, upstream, sweep, binding, inputs, fed, layout)
        if reason:
            return reason
    reason = _bind_inputs(case, (), signature, case.inputs, sweep, binding, inputs, layout)
    if reason:
        return reason
    if not case.reject:
        reason = _why_not(case, (), signature, case.attributes, {i.name for i in case.inputs} | fed,
                          [o.name for o in case.outputs], binding)
        if reason:
            return reason
        _check_attribute_kinds(case, (), signature, case.attributes)
        if case.upstream and upstream:  # bound above: a case whose upstream node exists here
            _check_attribute_kinds(case, ("upstream",), upstream, case.upstream.attributes)
    for item_input in inputs:
        where = ("upstream", "inputs") if case.upstream and item_input.spec in case.upstream.inputs else ("inputs",)
        _check_input_values(case, where, item_input)

    outputs = _item_outputs(case, signature, binding, layout)
    dtype_label = inputs[0].dtype.name
    item_id = f"{qualified_op(case.domain, case.op)}-{signature.version}/{case.name}[{dtype_label}]"
    breach = _breach(case, signature, inputs, {i.name for i in case.inputs} | fed, binding) if case.reject else None
    return Item(item_id, case, signature, dtype_label, tuple(inputs), tuple(outputs), upstream, layout, breach)


def _bind_upstream(case: Case, signature: OpVersion, upstream: OpVersion | None, sweep: str | None,
                   binding: dict[str, str], inputs: list[ItemInput], fed: set[str], layout: str) -> str | None:
    """Type the upstream node's inputs, then bind the operator's inputs it feeds (added to
    ``fed``) to the element types it produces; or say why the case does not apply here."""
    assert case.upstream is not None, "called for a case with an upstream node"
    if upstream is None:
        return f"no {case.upstream.op} exists at opset {signature.version}"
    upstream_binding: dict[str, str] = {}
    reason = _bind_inputs(case, ("upstream",), upstream, case.upstream.inputs, sweep, upstream_binding, inputs,
                          layout)
    reason = reason or _why_not(case, ("upstream",), upstream, case.upstream.attributes,
                                {i.name for i in case.upstream.inputs}, case.upstream.feeds, upstream_binding)
    if reason:
        return reason
    for produced, consumed in case.upstream.feeds.items():
        port: Any = upstream.port(produced)  # the signature has it: the case loaded
        dtype = upstream_binding.get(port.type) or _only_type(case, upstream, port.type, produced)
        target: Any = signature.port(consumed)
        if binding.setdefault(target.type, dtype) != dtype:
            return f"inputs of type {target.type} differ in element type"
        fed.add(consumed)
    return None


def _item_outputs(case: Case, signature: OpVersion, binding: dict[str, str], layout: str) -> list[ItemOutput]:
    """The outputs the item checks (the declared ones, else every required output), typed by the
    bound inputs, with their literal expected values if the case gives them."""
    outputs = []
    declared = case.outputs or tuple(OutputSpec(p.name, None) for p in signature.outputs if not p.optional)
    for spec in declared:
        # A must-reject case may name an output its version lacks: type it as a version that has it.
        owner = signature if signature.port(spec.name) else next(
            v for v in operators()[case.domain, case.op].versions.values() if v.port(spec.name))
        port: Any = owner.port(spec.name)  # owner was chosen for having it
        dtype = binding.get(port.type) or _attribute_type(case, port) or _only_type(case, owner, port.type, spec.name)
        if spec.dtype is not None and spec.dtype != dtype:
            raise case.error(("outputs", spec.name, "dtype"), f"is {spec.dtype} but {port.type} is {dtype} here")
        expected = None
        if spec.data is not None:
            try:
                expected = DTYPES[dtype].cast(spec.data)
                expected = expected if port.positions_of else stored(expected, layout)
            except ValueError as e:
                raise case.error(("outputs", spec.name, "data"), str(e)) from None
        shape = stored_shape(spec.shape, layout) if spec.shape is not None else None
        outputs.append(ItemOutput(spec.name, DTYPES[dtype], expected, port.positions_of, shape))
    return outputs


def _bind_inputs(case: Case, where: tuple, signature: OpVersion, specs: tuple[InputSpec, ...],
                 sweep: str | None, binding: dict[str, str], inputs: list[ItemInput], layout: str) -> str | None:
    """Type each input (its own dtype, else the swept one) and bind its type variable."""
    for spec in specs:
        name = spec.dtype or sweep
        if name is None:
            raise case.error(where + ("inputs", spec.name), "needs a dtype, or the case needs `dtypes`")
        port = signature.port(spec.name)
        if port is None or port not in signature.inputs:
            if case.reject:
                raise case.error(where + ("inputs", spec.name), f"{signature.op}-{signature.version} has no input {spec.name}")
            return f"{signature.op}-{signature.version} has no input {spec.name}"
        if binding.setdefault(port.type, name) != name and not case.reject:
            return f"inputs of type {port.type} differ in element type"
        inputs.append(ItemInput(spec.name, DTYPES[name], stored_shape(spec.shape, layout), spec))
    return None


def qualified_op(domain: str, op: str) -> str:
    return op if domain == ONNX_DOMAIN else f"{domain}.{op}"


def _why_not(case: Case, where: tuple, signature: OpVersion, attributes: dict, provided: set[str],
             outputs, binding: dict[str, str]) -> str | None:
    """Why a node does not exist in this form at this version (None: it does). A missing required
    input or attribute is a mistake of the case, not a version difference."""
    label = f"{signature.op}-{signature.version}"
    for name in attributes:
        if name not in signature.attributes:
            return f"{label} has no attribute {name}"
    for name in outputs:
        port = signature.port(name)
        if port is None or port not in signature.outputs:
            return f"{label} has no output {name}"
    for type_var, dtype in binding.items():
        if dtype not in signature.types[type_var]:
            return f"{label} does not accept {dtype} for {type_var}"
    for port in signature.inputs:
        if not port.optional and port.name not in provided:
            raise case.error(where + ("inputs",), f"{label} requires input {port.name}")
    for name in signature.required:
        if name not in attributes:
            raise case.error(where + ("attributes",), f"{label} requires attribute {name}")
    return None


def _breach(case: Case, signature: OpVersion, inputs: list[ItemInput], provided: set[str],
            binding: dict[str, str]) -> str | None:
    """Where a must-reject node breaks its version's signature, what: the first attribute, output,
    element type, required input or attribute, or attribute kind that the signature does not allow."""
    label = f"{signature.op}-{signature.version}"
    for item_input in inputs:  # each on its own: two inputs of one type variable may differ here
        port = signature.port(item_input.name)
        if port is not None and item_input.dtype.name not in signature.allowed(port):
            return f"{label} does not accept {item_input.dtype.name} for {port.type}"
    for name in signature.required:
        if name not in case.attributes:
            return f"{label} requires attribute {name}"
    missing = [port.name for port in signature.inputs if not port.optional and port.name not in provided]
    if missing:
        return f"{label} requires input {missing[0]}"
    reason = _why_not(case, (), signature, case.attributes, provided, [o.name for o in case.outputs], binding)
    if reason:
        return reason
    wrong = _wrong_kind(signature, case.attributes)
    return f"{label}'s {wrong[0]} is {signature.attributes[wrong[0]]}, not {wrong[1]}" if wrong else None


def _wrong_kind(signature: OpVersion, attributes: dict) -> tuple[str, str | None] | None:
    """The first attribute whose kind is not the signature's, and its kind."""
    for name, value in attributes.items():
        kind = ATTRIBUTE_KIND.get(helper.make_attribute(name, value).type)
        if kind != signature.attributes[name]:
            return name, kind
    return None


def _check_attribute_kinds(case: Case, where: tuple, signature: OpVersion, attributes: dict) -> None:
    wrong = _wrong_kind(signature, attributes)
    if wrong:
        raise case.error(where + ("attributes", wrong[0]), f"must be {signature.attributes[wrong[0]]}, not {wrong[1]}")


def _check_input_values(case: Case, where: tuple, item_input: ItemInput) -> None:
    spec, dtype = item_input.spec, item_input.dtype
    where = where + (spec.name,)
    if spec.random is None:
        try:
            dtype.cast(spec.data)
        except ValueError as e:
            raise case.error(where + ("data",), str(e)) from None
        return
    distribution = spec.random["distribution"]
    bounds = next((distribution[k] for k in ("integers", "uniform", "distinct") if isinstance(distribution, dict) and k in distribution), None)
    if bounds is not None and not (all(math.isfinite(b) for b in bounds) and bounds[0] <= bounds[1]):
        raise case.error(where + ("random", "distribution"), f"the bounds {bounds} must be finite, the lower one first")
    if dtype.is_integer and (distribution == "normal" or (isinstance(distribution, dict) and "uniform" in distribution)):
        raise case.error(where + ("random", "distribution"), f"{distribution} gives non-integers; {dtype.name} needs integers, choice or permutation")
    if isinstance(distribution, dict) and "distinct" in distribution:
        low, high = distribution["distinct"]
        if high - low + 1 < int(np.prod(spec.shape, dtype=np.int64)):
            raise case.error(where + ("random", "distribution"),
                             f"[{low}, {high}] holds fewer distinct integers than the {spec.shape} input")
    if isinstance(distribution, dict) and ({"integers", "choice", "distinct"} & set(distribution)):
        values = next(distribution[k] for k in ("integers", "choice", "distinct") if k in distribution)
        try:
            dtype.cast(values)
        except ValueError as e:
            raise case.error(where + ("random", "distribution"), str(e)) from None


def _attribute_type(case: Case, port) -> str | None:
    """The element type an attribute picks for ``port`` (an invalid value: the default's)."""
    if port.type_attribute is None:
        return None
    choice = port.type_attribute
    value = case.attributes.get(choice["name"], choice["default"])
    return choice["types"].get(value, choice["types"][choice["default"]])


def _only_type(case: Case, signature: OpVersion, type_var: str, name: str) -> str:
    allowed = signature.types[type_var]
    if len(allowed) != 1:
        raise case.error(("outputs", name), f"cannot tell the element type of {name}: {type_var} is unbound")
    return allowed[0]


def generate(random: dict[str, Any], dtype: DType, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(random["shape"])
    count = int(np.prod(shape, dtype=np.int64))
    distribution = random["distribution"]
    values: np.ndarray
    if distribution == "normal":
        values = rng.standard_normal(count)
    elif distribution == "permutation":
        values = rng.permutation(count)
        span = int(np.iinfo(dtype.numpy).max) - int(np.iinfo(dtype.numpy).min) + 1 if dtype.is_integer else 0
        if 0 < span <= 2**32:  # up from the type's lowest value, wrapping around a narrow type
            values = values % span + int(np.iinfo(dtype.numpy).min)
        else:  # float, or int64 (whose lowest value float64 cannot offset exactly): around 0
            values = values - count // 2
    elif distribution == "integers" or "integers" in distribution:
        if distribution == "integers":
            info = np.iinfo(dtype.numpy) if dtype.is_integer else np.iinfo(np.int8)
            low, high = int(info.min), int(info.max)
        else:
            low, high = distribution["integers"]
        values = rng.integers(low, high, size=count, endpoint=True)
    elif distribution == "lowest":
        values = np.full(count, np.iinfo(dtype.numpy).min if dtype.is_integer else -np.inf)
    elif distribution in ("edge_values", "edge_values_nan"):  # already exact in the type
        return value_classes.fill(shape, dtype.name, rng, with_nan=distribution == "edge_values_nan")
    elif "distinct" in distribution:
        low, high = distribution["distinct"]
        values = low + rng.permutation(high - low + 1)[:count]
    elif "uniform" in distribution:
        low, high = distribution["uniform"]
        values = rng.uniform(low, high, size=count)
    else:
        values = rng.choice(dtype.cast(distribution["choice"]), size=count)  # exact: no float64 on the way
    return dtype.cast(values).reshape(shape)


def _port_order(names: list[str], ports: tuple) -> list[str]:
    """``names`` in signature order, "" for a skipped optional port, trailing ones dropped;
    names beyond the signature (outputs a must-reject case adds) come last."""
    ordered = [p.name if p.name in names else "" for p in ports]
    ordered += [name for name in names if name not in ordered]
    while ordered and not ordered[-1]:
        ordered.pop()
    return ordered


def _declared(port: ItemInput, how: str) -> Any:
    """The shape the graph declares for an input (see Case.input_shapes)."""
    if how == "symbolic":
        return [f"{port.name}_{d}" for d in range(len(port.shape))]
    return port.shape


def build_model(item: Item) -> onnx.ModelProto:
    case = item.case
    rank = len(item.inputs[0].shape)
    onnx_domain = "" if case.domain == ONNX_DOMAIN else case.domain
    nodes = []
    own_inputs = [i.name for i in case.inputs]
    if case.upstream:
        feeder: Any = item.upstream  # set for a case with an upstream node
        nodes.append(helper.make_node(
            case.upstream.op, _port_order([i.name for i in case.upstream.inputs], feeder.inputs),
            _port_order(list(case.upstream.feeds), feeder.outputs), domain=onnx_domain,
            **case.upstream.attributes))
        # the fed inputs take the upstream output tensors' names
        by_port = {consumed: produced for produced, consumed in case.upstream.feeds.items()}
        node_inputs = [by_port.get(p.name, p.name if p.name in own_inputs else "")
                       for p in item.signature.inputs]
        while node_inputs and not node_inputs[-1]:
            node_inputs.pop()
    else:
        node_inputs = _port_order(own_inputs, item.signature.inputs)
    node_outputs = _port_order([o.name for o in item.outputs], item.signature.outputs)
    nodes.append(helper.make_node(case.op, node_inputs, node_outputs, domain=onnx_domain, **case.attributes))
    graph = helper.make_graph(
        nodes,
        f"{case.op}_{case.name}",
        [helper.make_tensor_value_info(i.name, i.dtype.onnx, _declared(i, case.input_shapes)) for i in item.inputs],
        # Output dims stay symbolic: the expectation, not onnx's shape inference, decides them.
        [helper.make_tensor_value_info(o.name, o.dtype.onnx, [f"{o.name}_{d}" for d in range(rank)])
         for o in item.outputs],
    )
    imports = [helper.make_opsetid(onnx_domain, item.version)]
    # A domain onnx does not know (com.ms.internal.nhwc copies ai.onnx's version numbers) takes
    # the IR version of the ai.onnx opset of the same number.
    known = onnx_domain in ("", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training")
    return helper.make_model(
        graph,
        opset_imports=imports,
        ir_version=helper.find_min_ir_version_for(imports if known else [helper.make_opsetid("", item.version)]),
        producer_name="maxpool-conformance",
    )


def valid_twin(item: Item, rank: int | None = None) -> Item | None:
    """The item's control: a minimal valid model of the same operator, domain, version, element
    type, rank, inputs and outputs (a 2-wide kernel over a 2-wide input, no padding; MaxUnpool of
    one element). A backend that refuses the item means something by it only where it runs this
    one (``conformance.judge.control``). Where the item's element type or outputs are what make it
    invalid (a must-reject item), the twin keeps what it can: the required outputs alone, then the
    operator's first element type (float32 where it has it), so that it still asks whether the
    backend runs this operator version and rank at all. ``rank``: another rank than the item's
    (where its rank is what makes it invalid). None where nothing applies."""
    port = item.signature.port("X")
    allowed = item.signature.allowed(port) if port else ()
    types = dict.fromkeys([item.dtype, *(["float32"] if "float32" in allowed else []), *allowed[:1]])
    optional = {o.name: getattr(item.signature.port(o.name), "optional", True) for o in item.outputs}
    required = tuple(o for o in item.outputs if not optional[o.name])  # a port the version lacks is no requirement
    for dtype in types:
        for outputs in [item.outputs] + ([required or item.outputs[:1]] if len(required) < len(item.outputs) else []):
            twin = _twin(item, dtype, outputs, rank or max(len(item.inputs[0].shape), 3))
            if twin is not None:
                return twin
    return None


def _twin(item: Item, dtype: str, item_outputs: tuple[ItemOutput, ...], rank: int) -> Item | None:
    case = item.case
    spatial = rank - 2
    own = {i.name for i in case.inputs} | (set(case.upstream.feeds.values()) if case.upstream else set())
    outputs = tuple(OutputSpec(o.name, None) for o in item_outputs)
    # Strides and pads written out, as exporters write them: a runtime whose path for an omitted
    # attribute is broken (MNN 3.6 divides by a missing stride) still runs its twin.
    written_out = {"strides": [1] * spatial, "pads": [0] * (2 * spatial)}
    if case.op == "MaxUnpool":
        attributes: dict[str, Any] = {"kernel_shape": [2] * spatial, **written_out}
        inputs = [InputSpec("X", dtype, np.ones((1, 1) + (1,) * spatial).tolist()),
                  InputSpec("I", "int64", np.zeros((1, 1) + (1,) * spatial, np.int64).tolist())]
        if "output_shape" in own:
            inputs.append(InputSpec("output_shape", "int64", [1, 1] + [2] * spatial))
    else:
        inputs = [InputSpec("X", dtype, np.arange(2 ** spatial).reshape((1, 1) + (2,) * spatial).tolist())]
        if case.domain == "org.openvinotoolkit":
            attributes = {"kernel": [2] * spatial, "strides": [1] * spatial, "pads_begin": [0] * spatial,
                          "pads_end": [0] * spatial}
            if case.attributes.get("index_element_type") in ("i32", "i64"):  # it types the Indices output
                attributes["index_element_type"] = case.attributes["index_element_type"]
        else:
            attributes = {"kernel_shape": [2] * spatial, **written_out}
    name = f"valid_twin/rank{rank}-{'_'.join(i.name for i in inputs)}-{'_'.join(o.name for o in outputs)}"
    twin_case = dataclasses.replace(case, name=name, versions=[item.version], dtypes=None, attributes=attributes,
                                    inputs=tuple(inputs), outputs=outputs, reject=None, ambiguity=None,
                                    expected_reading=None, erratum=None, upstream=None, derived_from=None)
    try:
        twin = _item(twin_case, item.signature, None, None)
    except CaseError:  # a value the operator cannot take at this version
        return None
    return twin if isinstance(twin, Item) else None

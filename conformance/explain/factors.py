"""A failed item as a configuration of the fuzz (``fuzz/space.py``: the operator version, attributes,
shape and a recipe of its values), and the probes an experiment makes of one: each factor a kernel
branches on, varied one at a time (``changes``), and the steps that make a failing model smaller
(``SHRINK_PASSES``). A probe is judged as the suite judges an item (``fuzz/cases.py``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import ml_dtypes
import numpy as np

from ..expand.items import Item
from ..fuzz.engine import palette_as
from ..fuzz.space import Target, on_axes, with_changes
from ..load.geometry_checks import pool_output_shape
from ..load.operators import operators
from ..semantics import GeometryError

Config = dict[str, Any]
PER_AXIS = ("kernel_shape", "kernel", "strides", "dilations", "pads_begin", "pads_end")  # one value per spatial axis
SIZED = ("kernel_shape", "kernel", "strides", "dilations")  # of those, each at least 1
# The element types a probe tries instead of the item's (of those its operator version takes): the
# ones runtimes keep kernels apart for (a float16 path, a float64 one, an integer one).
PROBED_TYPES = ("float32", "float16", "float64", "int8", "uint8")
MAX_EXTENT = 64  # an extent a probe grows to, at most: a probe stays as cheap as a small item


def config_of(item: Item, seed: int) -> Config | None:
    """The item as a configuration whose values are the item's own (``data``), or None where it
    is no MaxPool of valid inputs (a must-reject model, a round trip, MaxUnpool: left unprobed)."""
    case = item.case
    if case.reject or case.upstream is not None or not case.op.endswith("MaxPool") or len(item.inputs) != 1:
        return None
    x = item.case_inputs(seed)[item.inputs[0].name]  # channels-first, as a configuration's shape
    if x.ndim < 3:
        return None
    return {"target": Target(case.domain, case.op, item.version), "dtype": item.dtype, "shape": list(x.shape),
            "attributes": copy.deepcopy(dict(case.attributes)), "outputs": [o.name for o in item.outputs],
            "filling": filling_like(x), "input_shapes": case.input_shapes, "data": x}


def filling_like(x: np.ndarray) -> dict[str, Any]:
    """A recipe of values like ``x``'s: its special values (NaN, infinities, zeros of both signs,
    its type's extremes) at the rate it holds them, over distinct values or few small ones (ties)."""
    wide = x.astype(np.float64).reshape(-1)
    floating = x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16
    if floating:
        special = ~np.isfinite(wide) | ((wide == 0) & np.signbit(wide))
    else:
        info = np.iinfo(x.dtype)
        special = (wide == info.min) | (wide == info.max)
    values = wide[special]
    palette = [float(v) for v in dict.fromkeys(values.tolist())] if floating else [int(v) for v in dict.fromkeys(values)]
    ties = wide.size > 0 and len(np.unique(wide[~special])) < 0.5 * int((~special).sum())
    return {"seed": 0, "base": "ties" if ties else "distinct", "rate": float(special.mean()) if wide.size else 0.0,
            "palette": palette or [0]}


def key_of(config: Config) -> str:
    """What identifies a probe: its configuration, and its literal values where it keeps them."""
    plain = repr({k: v for k, v in config.items() if k != "data"})
    data = config.get("data")
    return plain if data is None else f"{plain}|{data.dtype}|{data.tobytes().hex()}"


def rank_of(config: Config) -> int:
    return len(config["shape"]) - 2


def pads_of(config: Config) -> tuple[list[int], list[int]]:
    """Each spatial axis' begin and end pads, as the attributes give them (0 where left out)."""
    a, rank = config["attributes"], rank_of(config)
    if "pads" in a:
        return list(a["pads"][:rank]), list(a["pads"][rank:])
    return list(a.get("pads_begin", [0] * rank)), list(a.get("pads_end", [0] * rank))


def with_pads(config: Config, begin: list[int], end: list[int]) -> Config:
    a = dict(config["attributes"])
    if "pads_begin" in a or "pads_end" in a:
        a.update(pads_begin=begin, pads_end=end)
    else:
        a["pads"] = begin + end
    return changed(config, attributes=a)


def changed(config: Config, **changes: Any) -> Config:
    """``config`` with ``changes``; its literal values kept only where its shape and element type stay."""
    new = with_changes({k: v for k, v in config.items() if k != "data"}, **changes)
    if "data" in config and new["shape"] == config["shape"] and new["dtype"] == config["dtype"]:
        new["data"] = config["data"]
    return new


def with_axes(config: Config, kept: list[int]) -> Config:
    """``config`` on the spatial axes ``kept`` (fuzz/space.py's ``on_axes``), its values kept where its shape stays."""
    return changed(config, **on_axes(config, kept))


@dataclass(frozen=True)
class Change:
    """One factor of a model varied: what it is, its value in the model, the value tried instead."""

    factor: str  # "rank", "dilations[1]", "pads on axis 0", "element type", "Indices", "N", ...
    now: str  # the model's value, as a condition reads: "the input is 1-D", "dilations[1] = 2"
    then: str  # the value tried: "2-D", "dilations[1] = 1"
    config: Config
    # What two models' values of the factor must share to be one condition: the value itself, or its
    # class where any value of it fails alike (a shrink stops at [2, 1] from one item, [1, 0] from another)
    kind: str = ""

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", self.now)


def changes(config: Config) -> Iterator[Change]:
    """Every factor of ``config`` varied once: the operator version, element type, Indices, N, C,
    rank (one axis fewer, one more), each per-axis attribute, each axis' pads (symmetric, none),
    each optional attribute left out, each extent, the values, the declared shapes."""
    for factors in (_of_the_node, _of_the_geometry, _of_the_input):
        yield from factors(config)


def _of_the_node(config: Config) -> Iterator[Change]:
    """The operator version, the element type, Indices, each optional attribute left out, and
    strides, dilations and pads written out with their defaults where left out."""
    target, a = config["target"], config["attributes"]
    signature = target.signature
    for version in operators()[target.domain, target.op].versions:
        if version != target.version:  # a runtime registers a kernel per version: one of them may be wrong
            yield Change("version", f"{target.op}'s version is {target.version}", str(version),
                         changed(config, target=Target(target.domain, target.op, version)))
    for dtype in PROBED_TYPES:
        if dtype != config["dtype"] and dtype in signature.types["T"]:
            palette = palette_as(config["filling"]["palette"], dtype) or [0]
            filling = dict(config["filling"], palette=palette, rate=config["filling"]["rate"] if palette != [0] else 0.0)
            yield Change("element type", f"the element type is {config['dtype']}", dtype,
                         changed(config, dtype=dtype, filling=filling))
    if signature.port("Indices"):
        with_indices = "Indices" in config["outputs"]
        yield Change("Indices", "Indices are asked for" if with_indices else "Indices are not asked for",
                     "without Indices" if with_indices else "with Indices",
                     changed(config, outputs=["Y"] if with_indices else ["Y", "Indices"]))
    rank = rank_of(config)
    for name, default in (("strides", [1] * rank), ("dilations", [1] * rank), ("pads", [0] * 2 * rank)):
        if name in signature.attributes and name not in a and not (name == "pads" and _auto_padded(a)):
            # written out with its default value: a runtime that defaults it otherwise shows here
            yield Change(name, f"{name} is left out", f"{name} written out as {default}",
                         changed(config, attributes=dict(a, **{name: default})))
    for name, value in a.items():
        if name in signature.required or name in PER_AXIS or name in ("pads", "activation_params"):
            continue
        rest = {k: v for k, v in a.items() if k != name and not (name == "activation" and k == "activation_params")}
        yield Change(name, f"{name} = {value}", f"{name} left out", changed(config, attributes=rest))


def _of_the_geometry(config: Config) -> Iterator[Change]:
    """The rank, each axis' kernel, stride and dilation, each axis' pads."""
    a, rank = config["attributes"], rank_of(config)
    if rank > 1:
        yield Change("rank", f"the input is {rank}-D", f"{rank - 1}-D", with_axes(config, list(range(rank - 1))))
    if rank < 3:
        yield Change("rank", f"the input is {rank}-D", f"{rank + 1}-D", with_axes(config, list(range(rank)) + [rank - 1]))
    for name in SIZED:
        values = a.get(name)
        if not isinstance(values, list) or len(values) != rank:
            continue
        for axis, value in enumerate(values):
            other = 1 if value > 1 else 2
            yield Change(f"{name}[{axis}]", f"{name}[{axis}] = {value}", f"{name}[{axis}] = {other}",
                         changed(config, attributes=dict(a, **{name: values[:axis] + [other] + values[axis + 1:]})),
                         f"{name}[{axis}] > 1" if value > 1 else "")
    if _auto_padded(a):
        return
    begin, end = pads_of(config)
    for axis in range(rank):
        b, e = begin[axis], end[axis]
        tried = ([(max(b, e), max(b, e))] if b != e else [(b, e + 1)]) + ([(0, 0)] if b or e else [])
        placed = "asymmetric" if b != e else "symmetric" if b else "none"
        for nb, ne in tried:
            yield Change(f"pads on axis {axis}", f"the pads on axis {axis} are {placed}, [{b}, {e}]", f"[{nb}, {ne}]",
                         with_pads(config, begin[:axis] + [nb] + begin[axis + 1:], end[:axis] + [ne] + end[axis + 1:]),
                         f"pads on axis {axis}: {placed}")


def _of_the_input(config: Config) -> Iterator[Change]:
    """N, C, each extent, the special values and ties, declared or symbolic shapes."""
    shape = config["shape"]
    for axis, name in ((0, "N"), (1, "C")):
        other = 1 if shape[axis] != 1 else (2 if axis == 0 else 8)
        yield Change(name, f"{name} = {shape[axis]}", f"{name} = {other}",
                     changed(config, shape=shape[:axis] + [other] + shape[axis + 1:]))
    for axis in range(rank_of(config)):
        extent = shape[2 + axis]
        if extent < MAX_EXTENT:
            yield Change(f"extent[{axis}]", f"spatial extent[{axis}] = {extent}", f"{extent + 1}",
                         changed(config, shape=shape[:2 + axis] + [extent + 1] + shape[3 + axis:]))
    filling = config["filling"]
    if filling["rate"]:
        yield Change("values", "X holds special values", "none", changed(config, filling=dict(filling, rate=0.0)))
    if filling["base"] == "ties":
        yield Change("values", "X holds ties", "distinct values", changed(config, filling=dict(filling, base="distinct")))
    shapes = config.get("input_shapes", "declared")
    other_shapes = "symbolic" if shapes == "declared" else "declared"
    yield Change("input shapes", f"the input's shape is {shapes}", other_shapes, changed(config, input_shapes=other_shapes))


def _auto_padded(a: dict[str, Any]) -> bool:
    return str(a.get("auto_pad", "NOTSET")).upper() not in ("NOTSET", "EXPLICIT")


# ---- the shrink passes: each yields smaller models than ``config``, the most telling step first ----

def fewer_outputs(config: Config) -> Iterator[Config]:
    if "Indices" in config["outputs"]:
        yield changed(config, outputs=["Y"])


def one_batch_one_channel(config: Config) -> Iterator[Config]:
    shape = config["shape"]
    for axis in (0, 1):
        if shape[axis] > 1:
            yield changed(config, shape=shape[:axis] + [1] + shape[axis + 1:])


def fewer_axes(config: Config) -> Iterator[Config]:
    rank = rank_of(config)
    for dropped in range(rank - 1, -1, -1) if rank > 1 else ():
        yield with_axes(config, [i for i in range(rank) if i != dropped])


def attributes_left_out(config: Config) -> Iterator[Config]:
    a, required = config["attributes"], config["target"].signature.required
    for name in a:
        if name not in required and name != "activation_params":
            yield changed(config, attributes={k: v for k, v in a.items()
                                              if k != name and not (name == "activation" and k == "activation_params")})


def smaller_attributes(config: Config) -> Iterator[Config]:
    a, rank = config["attributes"], rank_of(config)
    for name in SIZED:
        values = a.get(name)
        if isinstance(values, list) and len(values) == rank:
            for axis, value in enumerate(values):
                if value > 1:
                    yield changed(config, attributes=dict(a, **{name: values[:axis] + [value - 1] + values[axis + 1:]}))
    if not _auto_padded(a):
        begin, end = pads_of(config)
        for axis in range(rank):
            if begin[axis]:
                yield with_pads(config, begin[:axis] + [begin[axis] - 1] + begin[axis + 1:], end)
            if end[axis]:
                yield with_pads(config, begin, end[:axis] + [end[axis] - 1] + end[axis + 1:])


def smaller_extents(config: Config) -> Iterator[Config]:
    shape = config["shape"]
    for axis in range(2, len(shape)):
        for smaller in dict.fromkeys((shape[axis] // 2, shape[axis] - 1)):
            if 1 <= smaller < shape[axis]:
                yield changed(config, shape=shape[:axis] + [smaller] + shape[axis + 1:])


def plainer_values(config: Config) -> Iterator[Config]:
    filling = config["filling"]
    if "data" in config:  # the item's own values, for a recipe of them
        yield {k: v for k, v in config.items() if k != "data"}
    if filling["rate"]:
        yield changed(config, filling=dict(filling, rate=0.0))
    if filling["base"] != "distinct":
        yield changed(config, filling=dict(filling, base="distinct"))


def float32(config: Config) -> Iterator[Config]:
    if config["dtype"] != "float32" and "float32" in config["target"].signature.types["T"]:
        palette = palette_as(config["filling"]["palette"], "float32") or [0]
        yield changed(config, dtype="float32", filling=dict(config["filling"], palette=palette))


def declared_shapes(config: Config) -> Iterator[Config]:
    if config.get("input_shapes", "declared") != "declared":
        yield changed(config, input_shapes="declared")


# In order (as Hypothesis's shrinker orders its passes): what removes most of a model first, so
# that later passes work on a small one; the values last but one, and the element type last,
# since a bug of one type's kernel must keep its type.
SHRINK_PASSES: tuple[Callable[[Config], Iterator[Config]], ...] = (
    fewer_outputs, one_batch_one_channel, fewer_axes, attributes_left_out, smaller_extents, smaller_attributes,
    plainer_values, declared_shapes, float32)


def described(config: Config) -> str:
    """A model as a line reads it: MaxPool-12 float32 [1, 1, 3] -> [1, 1, 3] kernel_shape=[2]
    pads=[0, 1], with Indices (the input's shape, then Y's by the documents)."""
    target = config["target"]
    try:
        produced = pool_output_shape(target.domain, target.op, config["attributes"], tuple(config["shape"]))
    except (GeometryError, KeyError, TypeError, ValueError):
        produced = None
    shapes = f"{config['shape']}" + (f" -> {list(produced)}" if produced is not None else "")
    domain = "" if target.domain == "ai.onnx" else f"{target.domain} "
    attributes = " ".join(f"{k}={v}" for k, v in sorted(config["attributes"].items()))
    extra = (", with Indices" if "Indices" in config["outputs"] else "") + (
        ", symbolic input shape" if config.get("input_shapes", "declared") != "declared" else "")
    return f"{domain}{target.op}-{target.version} {config['dtype']} {shapes} {attributes}{extra}".replace("  ", " ")


def as_json(config: Config) -> dict[str, Any]:
    """A minimal model in results.json: what builds it again (its values from the recipe, or the item's)."""
    target = config["target"]
    return {"domain": target.domain, "op": target.op, "version": target.version, "dtype": config["dtype"],
            "shape": list(config["shape"]), "attributes": config["attributes"], "outputs": list(config["outputs"]),
            "input_shapes": config.get("input_shapes", "declared"), "values": "the item's" if "data" in config else
            dict(config["filling"], palette=[v if isinstance(v, int) or np.isfinite(v) else str(v)
                                             for v in config["filling"]["palette"]])}

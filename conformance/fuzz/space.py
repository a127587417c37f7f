"""What `conformance fuzz` draws: legal configurations of every covered operator version, as
hypothesis strategies, biased towards the properties runtime kernels branch on.

A configuration is a recipe, not data: the operator version, its attributes, the input shapes and
how to fill them (a seed, a base distribution and a palette of special values sprinkled at a
rate). :func:`materialize` turns it into a case of ``cases.schema.json``, literal inputs and
derived outputs, which the suite's own loader and expansion turn into an item. Keeping the recipe
lets the shrinker and the selector analysis change a shape without re-drawing the values.

Legality comes from ``operators.yaml`` (attributes, outputs and element types per version); the
geometry (sizes, kernels, pads) is drawn so that every window exists, and what the reference
still refuses is discarded by the engine. A small share of draws is a must-reject model: one
rule of the documents broken on purpose, for a backend to refuse.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

from ..load.dtypes import DTYPES
from ..load.value_classes import edge_values
from ..expand.items import ONNX_DOMAIN, qualified_op
from ..load.operators import OpVersion, operators

OPENVINO = "org.openvinotoolkit"
NHWC_DOMAINS = ("com.ms.internal.nhwc", "com.microsoft")
MAX_ELEMENTS = 4096  # per input: large enough for vector remainders, small enough to shrink fast

# Sizes runtime kernels branch on. Channels: NCHWc blocks of 8 and 16 and their remainders (ORT's
# NCHWc transformer needs C % 8 == 0 or 16). Widths: vector widths (4, 8, 16 lanes) and one either
# side. Kernels: 1 (a copy), 2-5, and the 9-tap windows of 3x3 and 1x9 fast paths.
CHANNELS = (1, 1, 1, 2, 3, 4, 8, 16, 7, 9, 15, 17, 24)
BATCHES = (1, 1, 2, 3)
# One draw in five has an empty axis (N, C or one spatial axis of 0): a valid model with an empty
# answer, which kernels that divide by, or loop down from, an extent mishandle.
EMPTY_AXES = (None,) * 12 + ("N", "C", "spatial")
SIZES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13)
WIDTHS = (15, 16, 17, 31, 32, 33, 7, 8, 9)  # either side of 8-, 16- and 32-element vectors
WIDE_ROWS = (1030, 1100)  # rows wider than a 1024-element buffer (a generic kernel takes them)
# Where pads sit, drawn as a selector of its own: kernels special-case begin-only and end-only
# padding (a begin pad moves the first window, an end pad adds the last; the last axis' end pad
# is the one vector kernels handle in a tail loop), so each placement is as likely as "anywhere".
PAD_PLACEMENTS = ("begin", "end", "both", "last_end", "anywhere")
# Cost caps: a window wider than this is never global along an axis (a wide row selects the row
# kernel, not the window size), and pads stay below it, so that the reference's edge loop (one
# step per output whose window reaches into padding, times its taps) stays short.
MAX_EDGE = 8
KERNELS = (1, 2, 3, 2, 3, 4, 5, 9)
STRIDES = (1, 2, 2, 3, 3)
DILATIONS = (1, 2, 3)
SPATIAL_RANKS = (1, 2, 3, 1, 2, 3, 4)  # hypothesis draws the later ones less: each rank twice


def spatial_ranks(target: "Target") -> tuple[int, ...]:
    """The spatial ranks drawn for an operator (4 for ONNX MaxPool and MaxUnpool, whose runtimes
    have generic N-d kernels; the others' kernels and documents stop at 3)."""
    if target.domain == ONNX_DOMAIN:
        return SPATIAL_RANKS if target.op == "MaxPool" else (1, 2, 2, 3, 4)
    return SPATIAL_RANKS[:-1] if target.domain in NHWC_DOMAINS else (1, 2, 2, 3)


@dataclass(frozen=True)
class Target:
    domain: str
    op: str
    version: int
    dtypes: tuple[str, ...] = ()  # the element types to draw (empty: every one the version accepts)

    @property
    def signature(self) -> OpVersion:
        return operators()[self.domain, self.op].versions[self.version]

    @property
    def label(self) -> str:
        return f"{qualified_op(self.domain, self.op)}-{self.version}"


def all_targets() -> list[Target]:
    return [Target(domain, op, version) for (domain, op), operator in sorted(operators().items())
            for version in sorted(operator.versions)]


def select_targets(spec: str | None) -> list[Target]:
    """``MaxPool-12,org.openvinotoolkit.MaxPool`` -> those versions (a name without -N: every version)."""
    targets = all_targets()
    if not spec:
        return targets
    chosen = []
    for word in filter(None, (w.strip() for w in spec.split(","))):
        found = [t for t in targets if word in (t.label, t.label.rpartition("-")[0])]
        if not found:
            raise ValueError(f"--ops {word}: no such operator version (known: {', '.join(t.label for t in targets)})")
        chosen += [t for t in found if t not in chosen]
    return chosen


# ---- values ---------------------------------------------------------------------------------

def special_values(dtype: str) -> list[float | int]:
    """The values kernels get wrong: NaN, infinities, -0.0, the type's extremes, subnormals, and
    values that computing through a narrower type would merge (2**24 + 1 for int32 through float32,
    2**53 + 1 for int64 through double, 2049 for float32 through float16, 1e38 for bfloat16 through
    float16, 1 + 2**-30 for double through float)."""
    numpy = DTYPES[dtype].numpy
    if DTYPES[dtype].is_integer:
        info = np.iinfo(numpy)
        integers = [int(info.min), int(info.max), 0, -1, 1, int(info.min) + 1]
        if dtype == "int32":
            integers += [2**24 + 1, 2**24, -(2**24 + 1)]
        if dtype == "int64":
            integers += [2**53 + 1, 2**53, -(2**53 + 1), 2**63 - 1]
        values: list[float | int] = [v for v in integers if info.min <= v <= info.max]
        return values + _new_edge_values(dtype, values)
    floats = ml_dtypes.finfo(numpy) if numpy == ml_dtypes.bfloat16 else np.finfo(numpy)
    specials = [float("nan"), float("-inf"), float("inf"), -0.0, 0.0, float(floats.min), float(floats.max),
                float(floats.smallest_subnormal), -float(floats.smallest_subnormal)]
    specials += {"float32": [2049.0, 2048.0, 70000.0], "float64": [1 + 2**-30, 1.0, 2049.0, 1e300],
                 "bfloat16": [1e38, -1e38, 2.0**-130], "float16": [2049.0, 2048.0]}.get(dtype, [])
    values = [float(np.asarray(v).astype(numpy).astype(np.float64)) if np.isfinite(v) else v for v in specials]
    return values + _new_edge_values(dtype, values)


def _new_edge_values(dtype: str, drawn: list[float | int]) -> list[float | int]:
    """The edge values of ``value_classes`` (smallest normals, sibling values...) not among ``drawn``,
    so that each of them can be the answer of a fuzzed window as well."""
    known = {(float(v), bool(np.signbit(v))) for v in drawn if not (isinstance(v, float) and math.isnan(v))}
    edges = [value for _, value in edge_values(dtype)]
    return [v for v in edges if isinstance(v, (int, float)) and (float(v), bool(np.signbit(v))) not in known]


# Where each float type's neighbours merge in the next narrower type (float64 -> float32 at
# 2**24, float32 -> float16 at 2048; bfloat16 -> float16 overflows above 65504), and a step that
# keeps the values distinct in the type itself.
PRECISION_EDGE = {"float64": 2.0**24, "float32": 2048.0, "float16": -2048.0, "bfloat16": 65536.0}
EDGE_STEP = {"float64": 0.5, "float32": 0.5, "float16": 1.0, "bfloat16": 512.0}


# ---- strategies, each built once ---------------------------------------------------------------
# Hypothesis validates a strategy on its first draw, which cost more than the draw itself when
# every draw built its strategies anew; built once, they draw exactly the same choices.

@functools.cache
def _among(values: tuple[int | str | None, ...]) -> st.SearchStrategy:
    """``st.sampled_from(values)``, built once per tuple (of ints, strings or None only: a cache
    keyed by floats or booleans would take 0.0 for -0.0 and True for 1)."""
    return st.sampled_from(values)


@functools.cache
def _between(low: int, high: int) -> st.SearchStrategy:
    return st.integers(low, high)


@functools.cache
def _several(element: st.SearchStrategy, count: int) -> st.SearchStrategy:
    """Lists of exactly ``count`` draws of ``element`` (a strategy built once, so that the key is stable)."""
    return st.lists(element, min_size=count, max_size=count)


@functools.cache
def _omitted_or(value_strategy: st.SearchStrategy, weight: int) -> st.SearchStrategy:
    return st.one_of(st.none(), *([value_strategy] * weight))


BOOLEANS = st.booleans()
FILLING_SEEDS = st.integers(0, 2**16)
# a window of the type's lowest value only, twice: each kernel seeds its maximum with a constant
# of its own (-FLT_MAX, -127, 0), and only such a window shows which
FILLING_BASES = st.sampled_from(("distinct", "ties", "edge", "lowest", "lowest"))
FILLING_RATES = st.sampled_from((0.0, 0.1, 0.5, 0.9, 1.0))
ACTIVATION_LOWS = st.sampled_from((0.0, -1.0, -0.5, 1.0, float("-inf")))
ACTIVATION_HIGHS = st.sampled_from((6.0, 0.5, 1.0, 0.0, float("inf")))
# One plane (N = C = 1) a third of the time: questions like storage_order's scope are open over
# several planes only.
SEVERAL_PLANES = st.sampled_from((True, True, False))
GLOBAL_WINDOW = st.sampled_from((False, False, False, False, True))  # a window as large as the input


@functools.cache
def _palettes(dtype: str) -> st.SearchStrategy:
    return st.lists(st.sampled_from(special_values(dtype)), min_size=1, max_size=3)


@functools.cache
def fillings(dtype: str) -> st.SearchStrategy:
    """How to fill an input: distinct values (every maximum unique) or few small ones (ties), with
    special values of the type sprinkled at a rate."""
    return _fillings(dtype)


@st.composite
def _fillings(draw, dtype: str) -> dict[str, Any]:
    return {
        "seed": draw(FILLING_SEEDS),
        "base": draw(FILLING_BASES),
        "rate": draw(FILLING_RATES),
        "palette": draw(_palettes(dtype)),
    }


def fill(filling: dict[str, Any], dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    numpy = DTYPES[dtype].numpy
    count = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(filling["seed"])
    values: np.ndarray
    if filling["base"] == "distinct":  # no zero: a signed zero comes from the palette alone
        values = rng.permutation(count) - count // 2
        values = np.where(values >= 0, values + 1, values)
        if DTYPES[dtype].is_integer:
            info = np.iinfo(numpy)
            values = values % (int(info.max) - int(info.min) + 1) + int(info.min) if info.bits <= 8 else values
        else:
            values = values * 0.5 if dtype in ("float32", "float64") else values.astype(np.float64)
    elif filling["base"] == "edge":  # distinct values where a narrower type runs out of precision or range
        values = rng.permutation(count)
        if DTYPES[dtype].is_integer:
            info = np.iinfo(numpy)
            start = {"int32": 2**24 - count // 2, "int64": 2**53 - count // 2}.get(dtype, int(info.min))
            values = (values % (int(info.max) - start + 1)) + start
        else:
            values = PRECISION_EDGE[dtype] + values * EDGE_STEP[dtype]
    elif filling["base"] == "lowest":  # windows of the type's lowest value only: a kernel's seed shows
        values = np.full(count, float(np.iinfo(numpy).min) if DTYPES[dtype].is_integer else -np.inf)
    else:
        values = rng.choice(np.array([-2, -1, 1, 2]), count)
        if DTYPES[dtype].is_integer and np.iinfo(numpy).min == 0:
            values = values + 2
    array = values.astype(np.float64).astype(numpy) if not DTYPES[dtype].is_integer else values.astype(numpy)
    # over a base of the type's lowest value, specials are sprinkled sparsely (an eighth of the
    # rate), so that most windows stay wholly at the lowest value
    sprinkled = rng.random(count) < filling["rate"] / (8 if filling["base"] == "lowest" else 1)
    palette = filling["palette"]
    picks = rng.integers(0, len(palette), count)
    # each special as the type holds it (integers exactly), then placed in one vectorised step
    held = np.array([numpy.type(v) if DTYPES[dtype].is_integer else np.asarray(v).astype(numpy) for v in palette],
                    dtype=numpy)
    out = array.reshape(-1).copy()
    out[sprinkled] = held[picks[sprinkled]]
    return out.reshape(shape)


# ---- configurations -------------------------------------------------------------------------

def _optional(draw, value_strategy, weight: int = 1):
    """Omitted (None) or drawn (``weight`` times as often): attributes are tried both absent and
    written out; omitted is what the shrinker prefers."""
    return draw(_omitted_or(value_strategy, weight))


def _dims(draw, rank: int) -> tuple[list[int], list[int]]:
    several = draw(SEVERAL_PLANES)
    n = draw(_among(BATCHES)) if several else 1
    c = draw(_among(CHANNELS)) if several else 1
    sizes = [draw(_among(SIZES)) for _ in range(rank)]
    row = draw(_among(("small", "vector", "wide")))  # the innermost axis: a row kernel's path
    if row != "small":
        sizes[-1] = draw(_among(WIDTHS if row == "vector" else WIDE_ROWS))
    # Keep it small: halve the outer spatial axes first (largest first), then N, then C (whose
    # remainders modulo 8 and 16 are selectors), the innermost axis (the row kernel's) last.
    dims = [n, c] + sizes
    order = sorted(range(2, len(dims) - 1), key=lambda i: -dims[i]) + [0, 1, len(dims) - 1]
    while int(np.prod(dims)) > MAX_ELEMENTS:
        axis = next(i for i in order if dims[i] > 1)
        dims[axis] = max(1, dims[axis] // 2)
    empty = draw(_among(EMPTY_AXES))
    if empty is not None:
        dims[{"N": 0, "C": 1}[empty] if empty != "spatial" else 2 + draw(_between(0, rank - 1))] = 0
    return dims[:2], dims[2:]


def _window(draw, sizes: list[int], kernels=KERNELS, dilated: bool = True) -> tuple[list[int], list[int] | None]:
    """A kernel (and dilations, or None for omitted) whose dilated extent fits each axis, so that
    every window holds an element."""
    kernel = [draw(_among(tuple(k for k in kernels if k <= size) or (1,))) for size in sizes]
    if draw(GLOBAL_WINDOW):  # global pooling
        kernel = [size if 0 < size <= 4 * MAX_EDGE else k for size, k in zip(sizes, kernel)]
    if not dilated:
        return kernel, None
    dilations = _optional(draw, _several(_among(DILATIONS), len(sizes)))
    if dilations is not None:
        dilations = [d if (k - 1) * d + 1 <= size else 1 for k, d, size in zip(kernel, dilations, sizes)]
    return kernel, dilations


@functools.cache
def _pads(extents: tuple[int, ...]) -> st.SearchStrategy:
    return _drawn_pads(list(extents))


@st.composite
def _drawn_pads(draw, extents: list[int]) -> list[int]:
    """ONNX pads (begins, then ends) below each window's extent, placed as PAD_PLACEMENTS says:
    a placed pad is at least 1 where the extent allows one."""
    placement = draw(_among(PAD_PLACEMENTS))
    rank = len(extents)
    pads = []
    for end in (False, True):
        for axis, extent in enumerate(extents):
            placed = {"begin": not end, "end": end, "both": True, "last_end": end and axis == rank - 1}.get(placement)
            low = 1 if placed and extent > 1 else 0
            pads.append(draw(_between(low, max(low, min(extent - 1, MAX_EDGE)))) if placed in (True, None) else 0)
    return pads


def _geometry(draw, target: Target, port: str, ranks, kernels=KERNELS, dilated: bool = True, dtype: str | None = None):
    """(element type, [N, C], spatial sizes, kernel, dilations or None), drawn in this order (the
    element type unless given)."""
    dtype = dtype or draw(_among(tuple(target.dtypes or target.signature.types[port])))
    rank = draw(_among(tuple(ranks)))
    nc, sizes = _dims(draw, rank)
    kernel, dilations = _window(draw, sizes, kernels, dilated=dilated)
    return dtype, nc, sizes, kernel, dilations


@st.composite
def onnx_maxpool(draw, target: Target, rank: int | None = None, dtype: str | None = None) -> dict[str, Any]:
    sig = target.signature
    ranks = (rank,) if rank else spatial_ranks(target)
    dtype, nc, sizes, kernel, dilations = _geometry(draw, target, "T", ranks, dilated="dilations" in sig.attributes,
                                                        dtype=dtype)
    rank = len(sizes)
    a: dict[str, Any] = {"kernel_shape": kernel}
    strides = _optional(draw, _several(_among(STRIDES), rank), 2)
    if strides is not None:
        a["strides"] = strides
    if dilations is not None:
        a["dilations"] = dilations
    auto_pad = draw(_among((None, None, "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")))
    if auto_pad is not None:
        a["auto_pad"] = auto_pad
    if auto_pad in (None, "NOTSET"):
        extents = [(k - 1) * d + 1 for k, d in zip(kernel, a.get("dilations", [1] * rank))]
        pads = _optional(draw, _pads(tuple(extents)), 2)
        if pads is not None:
            a["pads"] = pads
    for name in ("ceil_mode", "storage_order"):
        if name in sig.attributes:
            value = draw(_among((None, 0, 1, 1)))
            if value is not None:
                a[name] = value
    if a.get("ceil_mode") == 1 and auto_pad in (None, "NOTSET") and draw(BOOLEANS):
        sizes = _sizes_where_ceil_adds_a_window(sizes, kernel, a)
    if "activation" in sig.attributes and draw(BOOLEANS):
        low = draw(ACTIVATION_LOWS)
        high = draw(ACTIVATION_HIGHS)
        a["activation"] = draw(_among(("Relu", "Clip")))
        a["activation_params"] = [low, max(low, high)]
    outputs = ["Y"] + (["Indices"] if sig.port("Indices") and draw(BOOLEANS) else [])
    return {"target": target, "dtype": dtype, "shape": nc + sizes, "attributes": a, "outputs": outputs,
            "filling": draw(fillings(dtype))}


def _sizes_where_ceil_adds_a_window(sizes: list[int], kernel: list[int], a: dict[str, Any]) -> list[int]:
    """Each axis grown by less than two strides to the first size where ceil_mode keeps a last,
    partial window that starts inside the input (elsewhere ceil and floor agree, or the extra
    window starts in the padding and is dropped): the path a kernel takes for that window."""
    rank = len(sizes)
    strides, dilations = a.get("strides", [1] * rank), a.get("dilations", [1] * rank)
    pads = a.get("pads", [0] * 2 * rank)
    grown = []
    for axis, size in enumerate(sizes):
        extent, stride, begin = (kernel[axis] - 1) * dilations[axis] + 1, strides[axis], pads[axis]
        fits = [n for n in range(size, size + 2 * stride)  # total: the output formula's numerator
                if (total := n + begin + pads[rank + axis] - extent) >= 0 and total % stride
                and (total // stride + 1) * stride < n + begin]
        grown.append(fits[0] if fits and size > 0 else size)
    return grown


@st.composite
def openvino_maxpool(draw, target: Target, rank: int | None = None, dtype: str | None = None) -> dict[str, Any]:
    sig = target.signature
    dtype, nc, sizes, kernel, drawn = _geometry(draw, target, "T", (rank,) if rank else spatial_ranks(target),
                                                dilated="dilations" in sig.attributes, dtype=dtype)
    rank = len(sizes)
    a: dict[str, Any] = {"kernel": kernel, "strides": [draw(_among(STRIDES)) for _ in range(rank)]}
    dilations = [1] * rank
    if drawn is not None:
        a["dilations"] = dilations = drawn
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    a["pads_begin"] = [draw(_between(0, min(e - 1, MAX_EDGE))) for e in extents]
    a["pads_end"] = [draw(_between(0, min(e - 1, MAX_EDGE))) for e in extents]
    for name, values in (("auto_pad", ("explicit", "valid", "same_upper", "same_lower")),
                         ("rounding_type", ("floor", "ceil", "ceil"))):
        value = draw(_among((None,) + values))
        if value is not None:
            a[name] = value
    outputs = ["Y"]
    if "axis" in sig.attributes:
        # negative axes most (normalised by the input rank: a classic slip), each as likely as 0, 1 or 2
        axis = draw(_among((None, 0, 1, 2, -1, -1, -2, -(rank + 2))))
        if axis is not None and -(rank + 2) <= axis < rank + 2:
            a["axis"] = axis
        index_type = draw(_among((None, "i64", "i32", "i32")))
        if index_type:
            a["index_element_type"] = index_type
        if draw(BOOLEANS):
            outputs.append("Indices")
    return {"target": target, "dtype": dtype, "shape": nc + sizes, "attributes": a, "outputs": outputs,
            "filling": draw(fillings(dtype))}


@st.composite
def maxunpool(draw, target: Target, rank: int | None = None, dtype: str | None = None) -> dict[str, Any]:
    """A MaxPool -> MaxUnpool round trip, or X with legal indices (distinct, each in its plane)."""
    dtype, nc, sizes, kernel, _ = _geometry(draw, target, "T1", (rank,) if rank else spatial_ranks(target), KERNELS[:6],
                                            dilated=False, dtype=dtype)
    rank = len(sizes)
    a: dict[str, Any] = {"kernel_shape": kernel}
    strides = _optional(draw, _several(_among(STRIDES), rank))
    if strides is not None:
        a["strides"] = strides
    pads = _optional(draw, _pads(tuple(kernel)), 2)
    if pads is not None:
        a["pads"] = pads
    return {"target": target, "dtype": dtype, "shape": nc + sizes, "attributes": a, "outputs": ["output"],
            "form": draw(_among(("round_trip", "indices"))),
            "output_shape_growth": _optional(draw, _several(_between(0, 2), rank)),
            "filling": draw(fillings(dtype))}


# Rules a must-reject model breaks: (name, applies to, reason). Each is a rule the documents
# state plainly; the open questions (OpenVINO's zero strides) are left out.
BREAKS = {
    "zero_stride": "a stride of 0 moves no window",
    "negative_pad": "pads must be non-negative",
    "zero_kernel": "a window of size 0 has no maximum",
    "kernel_rank_differs": "kernel_shape has another length than the input's spatial rank",
    "pads_wrong_length": "pads needs two values per spatial axis",
    "unknown_attribute": "the operator has no attribute kernel",
    "type_not_allowed": "the version does not accept this element type",
    "storage_order_out_of_range": "storage_order is 0 or 1",
    "unknown_auto_pad": "auto_pad is one of the documented strings",
    "unknown_activation": "activation is Relu or Clip (nhwc-activation)",
    "activation_bounds_reversed": "activation_params are [min, max] with min <= max (nhwc-activation)",
}


@st.composite
def broken(draw, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with one documented rule broken."""
    target, a = config["target"], dict(config["attributes"])
    sig = target.signature
    openvino = target.domain == OPENVINO
    kernel_name = "kernel" if openvino else "kernel_shape"
    rank = len(config["shape"]) - 2
    port = "T1" if target.op == "MaxUnpool" else "T"
    refused = [d for d in DTYPES if d not in sig.types[port]]
    choices = ["zero_kernel", "negative_pad", "kernel_rank_differs"] + (["type_not_allowed"] if refused else [])
    if not openvino:
        choices += ["zero_stride", "pads_wrong_length", "unknown_attribute"]
        if target.op == "MaxPool":
            choices += ["unknown_auto_pad"] + (["storage_order_out_of_range"] if "storage_order" in sig.attributes else [])
        if "activation" in sig.attributes:
            choices += ["unknown_activation", "activation_bounds_reversed"]
    rule = draw(_among(tuple(choices)))
    dtype = config["dtype"]
    if rule == "zero_kernel":
        a[kernel_name] = [0] + list(a[kernel_name][1:])
    elif rule == "negative_pad":
        if openvino:
            a["pads_begin"] = [-1] + list(a["pads_begin"][1:])
        else:
            a.pop("auto_pad", None)
            a["pads"] = [-1] + [0] * (2 * rank - 1)
    elif rule == "kernel_rank_differs":
        a[kernel_name] = list(a[kernel_name]) + [1]
    elif rule == "zero_stride":
        a["strides"] = [0] + [1] * (rank - 1)
    elif rule == "pads_wrong_length":
        a.pop("auto_pad", None)
        a["pads"] = [0] * (2 * rank + 1)
    elif rule == "unknown_attribute":
        a["kernel"] = list(a["kernel_shape"])
    elif rule == "unknown_auto_pad":
        a.pop("pads", None)
        a["auto_pad"] = "SAME"
    elif rule == "storage_order_out_of_range":
        a["storage_order"] = 2
    elif rule == "unknown_activation":
        a.update(activation="Sigmoid", activation_params=[0.0, 6.0])
    elif rule == "activation_bounds_reversed":
        a.update(activation="Clip", activation_params=[6.0, 0.0])
    else:
        dtype = draw(_among(tuple(refused)))
        config = dict(config, filling=dict(config["filling"], palette=special_values(dtype)[:1]))
    return dict(config, attributes=a, geometry=config["attributes"], dtype=dtype, reject=f"{rule}: {BREAKS[rule]}")


Stratum = tuple[tuple[str, str], int]  # (operator family, spatial rank)


def strata(targets: list[Target]) -> list[Stratum]:
    """The search's chunks cycle through these, in this order: every operator family at every
    spatial rank it has, families interleaved (each rank of a family is one chunk of the cycle; ONNX
    MaxPool, with the most selectors and the most kernels behind it, has each rank twice but 4
    once). Fixing the two selectors that split the space most per chunk, and drawing the others
    freely within it, makes the combinations of the rest four to fifteen times as likely as
    drawing family and rank per configuration (a 3-D ONNX MaxPool chunk holds nothing but
    3-D ONNX MaxPool models)."""
    families: dict[tuple[str, str], list[int]] = {}
    for target in targets:
        ranks = spatial_ranks(target)
        families.setdefault((target.domain, target.op), list(ranks if ranks == SPATIAL_RANKS else sorted(set(ranks))))
    columns = [[(family, rank) for rank in ranks] for family, ranks in families.items()]
    order: list[Stratum] = []
    for row in range(max(map(len, columns), default=0)):
        order += [column[row] for column in columns if row < len(column)]
    return order


def _dtypes(target: Target) -> tuple[str, ...]:
    return target.dtypes or target.signature.types["T1" if target.op == "MaxUnpool" else "T"]


def configurations(targets: list[Target], reject_one_in: int = 6, stratum: Stratum | None = None):
    """Every target's space (or one stratum's: one family at one spatial rank); one draw in
    ``reject_one_in`` breaks a rule (0: none does)."""
    rank = stratum[1] if stratum else None
    if stratum:  # the element type first (float32, with the most kernels, twice), then a version that accepts it
        versions = [t for t in targets if (t.domain, t.op) == stratum[0]]
        dtypes = {d: [t for t in versions if d in _dtypes(t)] for t in versions for d in _dtypes(t)}
        weighted = [d for d in dtypes for _ in range(2 if d == "float32" else 1)]
        per_dtype = {dtype: st.sampled_from(accepting).flatmap(functools.partial(_one, rank=rank, dtype=dtype,
                                                                                  reject_one_in=reject_one_in))
                     for dtype, accepting in dtypes.items()}
        return st.sampled_from(weighted).flatmap(per_dtype.__getitem__)
    families: dict[tuple[str, str], list[Target]] = {}
    for target in targets:  # each operator as often as the others, whatever its number of versions
        families.setdefault((target.domain, target.op), []).append(target)
    return st.sampled_from(list(families.values())).flatmap(st.sampled_from).flatmap(
        functools.partial(_one, rank=None, dtype=None, reject_one_in=reject_one_in))


@functools.cache
def _one(target: Target, rank: int | None, dtype: str | None, reject_one_in: int) -> st.SearchStrategy:
    """One target's configurations (at ``rank`` and of ``dtype``, where given), one in
    ``reject_one_in`` with a rule broken."""
    if target.domain == OPENVINO:
        valid = openvino_maxpool(target, rank, dtype)
    elif target.op == "MaxUnpool":
        valid = maxunpool(target, rank, dtype)
    else:
        valid = onnx_maxpool(target, rank, dtype)
    if not reject_one_in:
        return valid
    return st.tuples(valid, _between(1, reject_one_in)).flatmap(
        lambda drawn: broken(drawn[0]) if drawn[1] == reject_one_in else st.just(drawn[0]))


def with_changes(config: dict[str, Any], **changes: Any) -> dict[str, Any]:
    changed = copy.deepcopy(config)
    changed.update(changes)
    return changed


def on_axes(config: dict[str, Any], kept: list[int]) -> dict[str, Any]:
    """The changes that put ``config`` on its spatial axes ``kept`` (indices of its axes; one given
    twice adds a copy of it): the shape, every per-axis attribute, pads' begins and ends, and a
    MaxUnpool's output_shape growth."""
    rank = len(config["shape"]) - 2
    a = {}
    for name, value in config["attributes"].items():
        if name == "pads" and isinstance(value, list) and len(value) == 2 * rank:
            value = [value[i] for i in kept] + [value[rank + i] for i in kept]
        elif isinstance(value, list) and len(value) == rank and name != "activation_params":
            value = [value[i] for i in kept]
        a[name] = value
    changes: dict[str, Any] = {"shape": config["shape"][:2] + [config["shape"][2 + i] for i in kept], "attributes": a}
    if config.get("output_shape_growth"):
        changes["output_shape_growth"] = [config["output_shape_growth"][i] for i in kept]
    return changes

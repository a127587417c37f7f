"""Defect models: named, documented ways a max-pooling implementation goes wrong, each a thin
layer over the reference backend (a subclass that overrides one of its hooks: the windows, the
pooling, its results, the unpooling). Run on an item, a model answers what a runtime with that
one bug answers; ``diagnosis.py`` names the models that reproduce a failed item's outputs exactly.

Each model cites where such a bug was seen: an upstream report, a runtime's known failures in
``expectations/``, or the fuzz's and the mutation self-test's variants (tests/mutants.py runs every
model here as a broken backend, and the suite must catch each).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import ml_dtypes
import numpy as np

from reference_backend import ReferenceBackend

from ..semantics import OPENVINO_DOMAIN, Axis
from .compare import same_bits



def base(cls: type[ReferenceBackend], hook: str) -> Callable:
    """What a model's ``hook`` builds on: the reference's own, bound to ``cls`` so that it follows
    ``cls.readings`` (a model run under another reading of an open question: ``cls.configured``),
    or, in a pair of models that both replace ``hook``, the second model's (``stacked``)."""
    below = getattr(cls, "_below", {}).get(hook)
    if below is not None:
        return getattr(below, hook).__func__.__get__(below)
    return getattr(SharedReference, hook).__func__.__get__(cls)


def hooks(model: type[ReferenceBackend]) -> set[str]:
    """The reference's hooks that ``model`` replaces (a pair of models: both's)."""
    return {name for cls in model.__mro__ if cls not in SharedReference.__mro__
            for name, value in vars(cls).items() if isinstance(value, classmethod) and not name.startswith("_")}


def stacked(upper: type[ReferenceBackend], lower: type[ReferenceBackend]) -> type[ReferenceBackend]:
    """Both models at once: a hook both replace is ``upper``'s built on ``lower``'s. An ``upper``
    that is itself two models stacked goes on top whole: (a over b) over c is a over (b over c)
    (the pair's own order would be lost under the new pair's, and b skipped)."""
    parts = vars(upper).get("_parts")
    if parts is not None:
        return stacked(parts[0], stacked(parts[1], lower))
    return type("Pair", (upper, lower), {"_below": dict.fromkeys(hooks(upper) & hooks(lower), lower),
                                         "_parts": (upper, lower)})
NHWC_DOMAINS = ("com.ms.internal.nhwc", "com.microsoft")


@dataclass(frozen=True)
class Facts:
    """What a model's relevance is decided on, read from an item without running anything."""

    op: str
    domain: str
    dtype: Any
    attributes: dict
    wants_indices: bool
    output_shape_given: bool
    pools_upstream: bool = False  # a MaxUnpool fed by a MaxPool in the same model (a round trip)

    @property
    def pools(self) -> bool:
        return self.op in ("MaxPool", "NhwcMaxPool") or self.pools_upstream

    @property
    def onnx_pool(self) -> bool:
        return self.pools and self.domain != OPENVINO_DOMAIN

    def has(self, name: str, default: Any = None) -> bool:
        """Whether ``name`` is set to other than ``default`` (absent counts as the default)."""
        value = self.attributes.get(name, default)
        return value is not None and value != default and value != []


@dataclass(frozen=True)
class DefectModel:
    name: str
    title: str  # what the runtime does wrong, as a report line names it
    seen: str  # where such a bug was seen
    backend: type[ReferenceBackend]
    applies: Callable[[Facts], bool] = lambda facts: True  # False where the model cannot change an answer
    touches: str = "any"  # the only output it can change ("Y" or "Indices"), or "any"
    # One bug that shows in several kernels (a runtime's scalar and vector paths): the models of a
    # family are one line of the report, each model a part of it (FAMILIES: its title).
    family: str | None = None
    # A value X must hold for the model to change anything ("nan"): diagnosis leaves it out elsewhere.
    needs: str | None = None
    # The open question whose behaviour the model replaces (its answer is its own under any reading
    # of it): diagnosis does not read it under that question's readings.
    decides: str | None = None

    @property
    def composite(self) -> bool:
        """Whether it is two bugs in one kernel (float16 pooled in float32 by a seeded loop): where a
        model of one of them alone also reproduces an item, the item shows only that one."""
        return "_parts" in vars(self.backend)

    @property
    def retypes(self) -> bool:
        """Whether it pools in another type (a narrower one, or float16 in float32): beside another bug
        it changes that bug's answer (a seed of float32's lowest, cast back to float64 or left in
        float32), so diagnosis tries it with each first."""
        return getattr(self.backend, "retypes", False)


def variant(**hooks: Callable) -> type[ReferenceBackend]:
    """The reference backend with some hooks replaced (each a function of cls and the hook's arguments)."""
    return type("Defect", (SharedReference,), {name: classmethod(hook) for name, hook in hooks.items()})


def geometry(change: Callable[[dict], dict]) -> type[ReferenceBackend]:
    """Rewrite an ai.onnx-style MaxPool's attributes before its windows are computed."""
    def axes(cls, domain, attrs, spatial):
        return base(cls, "axes")(domain, attrs if domain == OPENVINO_DOMAIN else change(dict(attrs)), spatial)
    return variant(axes=axes)


def axes_result(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the axes of an ai.onnx-style MaxPool: change(axes, auto_pad, ceil_mode)."""
    def axes(cls, domain, attrs, spatial):
        result = base(cls, "axes")(domain, attrs, spatial)
        if domain == OPENVINO_DOMAIN:
            return result
        return tuple(change(result, attrs.get("auto_pad", "NOTSET"), attrs.get("ceil_mode", 0)))
    return variant(axes=axes)


def axes_from(sizes: Callable) -> type[ReferenceBackend]:
    """Axes of an ai.onnx-style MaxPool whose output sizes come from ``sizes(attrs, spatial)``
    (the windows keep their starts; a size beyond the documents' adds windows at the end)."""
    def axes(cls, domain, attrs, spatial):
        result = base(cls, "axes")(domain, attrs, spatial)
        if domain == OPENVINO_DOMAIN:
            return result
        return tuple(dataclasses.replace(a, out=max(out, 0)) for a, out in zip(result, sizes(attrs, spatial)))
    return variant(axes=axes)


# While one item is diagnosed: the reference's pooling of an input, by the input's bytes, the axes
# and the readings. Every model pools through it (most rewrite its results; one that rewrites the
# windows pools other axes, which a pair with it meets again), and each would compute it again; the
# change functions make new arrays, never writing into the ones they are given.
_REFERENCE_POOLS: dict[tuple, Any] | None = None  # and the folds of _nan_folded, the first-equal searches


@contextlib.contextmanager
def reference_pools_shared() -> Iterator[None]:
    global _REFERENCE_POOLS
    _REFERENCE_POOLS = {}
    try:
        yield
    finally:
        _REFERENCE_POOLS = None


class SharedReference(ReferenceBackend):
    """The reference under every model, its pooling computed once per input, axes and readings while
    one item is diagnosed (not a hook a model replaces: ``hooks`` leaves it out)."""

    @classmethod
    def pool(cls, x: np.ndarray, axes: tuple[Axis, ...], storage_order: int = 0,
             with_indices: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        if _REFERENCE_POOLS is None:
            return super().pool(x, axes, storage_order, with_indices)
        key = ("pool", str(cls.readings), x.dtype.str, x.shape, x.tobytes(), tuple(axes), storage_order, with_indices)
        if key not in _REFERENCE_POOLS:
            _REFERENCE_POOLS[key] = super().pool(x, axes, storage_order, with_indices)
        return _REFERENCE_POOLS[key]


def pooled(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the pooling: change(x, axes, storage_order, pool) -> (y, indices), indices always
    computed; ``pool(x, axes, storage_order)`` is the reference's (in a pair, the other model's)."""
    def pool(cls, x, axes, storage_order=0, with_indices=True):
        below = base(cls, "pool")
        return change(x, axes, storage_order, lambda x, axes, storage_order=0: below(x, axes, storage_order, True))
    return variant(pool=pool)


def with_results(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the pooling's results: change(y, indices, x, axes) -> (y, indices)."""
    def wrapped(x, axes, storage_order, pool):
        y, indices = pool(x, axes, storage_order)
        return change(y, indices, x, axes)
    return pooled(wrapped)


def unpooled(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the unpooling: change(x, indices, shape, default_shape, unpool), ``unpool`` the reference's."""
    return variant(unpool=lambda cls, x, indices, shape, default_shape=None: change(
        x, indices, shape, default_shape, base(cls, "unpool")))


def through(dtype: Any, only: Any, saturating: bool = False) -> type[ReferenceBackend]:
    """X of element type ``only`` pooled in ``dtype`` (rounded or wrapped on the way, or with
    ``saturating`` clamped to its finite range, infinities included) and cast back."""
    def through_pool(x, axes, storage_order, pool):
        if x.dtype != only:
            return pool(x, axes, storage_order)
        with np.errstate(over="ignore", invalid="ignore"):
            narrowed = (np.clip(x, _finfo(dtype).min, _finfo(dtype).max) if saturating else x).astype(dtype)
        y, indices = pool(narrowed, axes, storage_order)
        if np.issubdtype(only, np.integer) and np.issubdtype(y.dtype, np.floating):
            y = _clamped_to(only, y)
        with np.errstate(over="ignore", invalid="ignore"):
            return y.astype(only), indices
    model = pooled(through_pool)
    model.retypes = True  # type: ignore[attr-defined]
    return model


def _clamped_to(integer: Any, y: np.ndarray) -> np.ndarray:
    """Floats clamped to the range of ``integer`` before they are cast to it, as a converting kernel
    does (C leaves an out-of-range cast undefined; numpy's gives the lowest integer): the top is the
    largest float of y's type within range (2^31 - 128 for float32 into int32), as OpenVINO's CPU
    plugin gives int32 and int64 maxima of 2147483647."""
    info = np.iinfo(integer)
    top = y.dtype.type(info.max)
    while int(top) > info.max:
        top = np.nextafter(top, y.dtype.type(0))
    return np.clip(y, y.dtype.type(info.min), top)


def widened(dtype: Any, only: Any) -> type[ReferenceBackend]:
    """X of element type ``only`` pooled in the wider ``dtype`` and returned in it: beside another
    bug, that bug's seed or padding is ``dtype``'s (OpenCV: float16 pooled in float32 from -FLT_MAX)."""
    def widened_pool(x, axes, storage_order, pool):
        return pool(x.astype(dtype) if x.dtype == only else x, axes, storage_order)
    model = pooled(widened_pool)
    model.retypes = True  # type: ignore[attr-defined]
    return model


def _seeded_in_float32(only: Any, saturating: bool = False) -> type[ReferenceBackend]:
    """``only`` pooled in float32 (``saturating``: infinities clamped to its finite range on the
    way) by a running maximum seeded as ``_seeded_at_plane_origin`` seeds it, at float32's lowest
    value: cast back, the seed of a window of -inf is -inf again (or -FLT_MAX where ``only``
    holds it), and its index the plane's first element."""
    model = stacked(through(np.float32, only, saturating), with_results(_seeded_at_plane_origin))
    model.retypes = False  # type: ignore[attr-defined]  # one model, not a type beside another bug
    return model


def _split(total, upper):
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)


def _same_total_without_dilation(axes, auto_pad, ceil_mode):
    if not auto_pad.startswith("SAME"):
        return axes
    changed = []
    for a in axes:
        total = (-(-a.size // a.stride) - 1) * a.stride + a.kernel - a.size
        begin, end = _split(total, auto_pad == "SAME_UPPER")
        out = (a.size + total - a.extent) // a.stride + 1
        changed.append(Axis(a.size, a.kernel, a.stride, a.dilation, begin, end, max(out, 0)))
    return changed


def _valid_size_without_dilation(axes, auto_pad, ceil_mode):
    if auto_pad != "VALID":
        return axes
    return [dataclasses.replace(a, out=max(0, -(-(a.size - a.kernel + 1) // a.stride))) for a in axes]


def _drop_window_on_last_element(axes, auto_pad, ceil_mode):
    if not ceil_mode or auto_pad != "NOTSET":
        return axes
    return [dataclasses.replace(a, out=a.out - 1) if a.out > 0 and (a.out - 1) * a.stride >= a.size + a.pad_begin - 1
            else a for a in axes]


def truncated_sizes(attrs: dict, spatial) -> list[int]:
    """ai.onnx MaxPool's output sizes divided as C divides integers, truncating towards zero:
    span / stride + 1 for floor, (span + stride - 1) / stride + 1 for ceil (less a last window that
    would start past the input), VALID as the explicit formula without pads."""
    rank = len(attrs["kernel_shape"])
    strides = attrs.get("strides") or [1] * rank
    dilations = attrs.get("dilations") or [1] * rank
    pads = attrs.get("pads") or [0] * (2 * rank)
    auto_pad = attrs.get("auto_pad", "NOTSET")
    sizes = []
    for i, (size, k, s, d) in enumerate(zip(spatial, attrs["kernel_shape"], strides, dilations)):
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            sizes.append(-(-size // s))
            continue
        span = size - ((k - 1) * d + 1) + (pads[i] + pads[i + rank] if auto_pad != "VALID" else 0)
        ceil = attrs.get("ceil_mode", 0) and auto_pad != "VALID"
        out = int((span + s - 1 if ceil else span) / s) + 1  # int(): C's truncation
        if ceil and out > 0 and (out - 1) * s >= size + pads[i]:
            out -= 1
        sizes.append(out)
    return sizes


def _zero_padding(x, axes, storage_order, pool):
    widths = [(0, 0), (0, 0)] + [(a.pad_begin, a.pad_end + a.end_overhang) for a in axes]
    padded = np.pad(x, widths)
    return pool(padded, tuple(Axis(s, a.kernel, a.stride, a.dilation, 0, 0, a.out)
                                  for s, a in zip(padded.shape[2:], axes)), storage_order)


def padding_at_lowest_finite(last_axis_only: bool) -> Callable:
    """Y as if the padding held the type's lowest finite value (a kernel that pads before it pools,
    with the seed of its running maximum), on every spatial axis or the last one only (the others
    clipped); Indices as the reference's."""
    def pooled_so(x, axes, storage_order, pool):
        y, indices = pool(x, axes, storage_order)
        if np.issubdtype(x.dtype, np.integer) or not axes:
            return y, indices
        padded_axes = [len(axes) - 1] if last_axis_only else range(len(axes))
        widths = [(0, 0), (0, 0)] + [(a.pad_begin, a.pad_end + a.end_overhang) if i in padded_axes else (0, 0)
                                     for i, a in enumerate(axes)]
        padded = np.pad(x, widths, constant_values=np.array(_finfo(x.dtype).min, x.dtype))
        inner = tuple(Axis(s, a.kernel, a.stride, a.dilation, 0, 0, a.out) if i in padded_axes else a
                      for i, (s, a) in enumerate(zip(padded.shape[2:], axes)))
        return pool(padded, inner, storage_order)[0], indices
    return pooled_so


def _window_touches_padding(axes, shape):
    touches = np.zeros(shape[2:], dtype=bool)
    for axis, a in enumerate(axes):
        per_output = np.array([any(not 0 <= p < a.size for p in a.positions(o)) for o in range(a.out)], dtype=bool)
        touches |= per_output.reshape([-1 if i == axis else 1 for i in range(len(axes))])
    return np.broadcast_to(touches, shape)


def _padding_wins_at_lowest(y, indices, x, axes):
    lowest = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
    return y, np.where((y.astype(np.float64) == lowest) & _window_touches_padding(axes, y.shape), -1, indices)


def _finfo(dtype):
    return ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)


def _floor_at_lowest_finite(y, indices, x, axes):
    if np.issubdtype(x.dtype, np.integer):
        return y, indices
    return np.maximum(y.astype(np.float64), float(_finfo(x.dtype).min)).astype(x.dtype), indices


def _plane_origins(y: np.ndarray, plane: int) -> np.ndarray:
    """The flat index of each output's (n, c) plane's first element, planes of ``plane`` elements,
    shaped to broadcast over y."""
    return np.arange(int(np.prod(y.shape[:2]))).reshape(y.shape[:2] + (1,) * (y.ndim - 2)) * plane


def _seeded_at_plane_origin(y, indices, x, axes):
    """A running maximum that starts at the type's lowest value, at the plane's first element, and
    moves only on a greater value: a window holding nothing greater (-inf, the lowest integer, no
    element) gives the lowest value and the plane's first index."""
    integer = np.issubdtype(x.dtype, np.integer)
    lowest = float(np.iinfo(x.dtype).min) if integer else float(_finfo(x.dtype).min)
    wide = y.astype(np.float64)
    seeded = wide <= lowest
    if not integer:
        y = np.maximum(wide, lowest).astype(x.dtype)
    if indices is not None and y.ndim >= 2:
        indices = np.where(seeded, np.broadcast_to(_plane_origins(y, int(np.prod(x.shape[2:]))), y.shape), indices)
    return y, indices


def _nan_never_selected(x, axes, storage_order, pool):
    """A running maximum that moves only on a greater value (``if (v > m)``, or maxps with the
    maximum second) passes NaN over: a window's other elements give its maximum, and a window of
    NaN only keeps the seed, the type's lowest finite value."""
    if not (np.issubdtype(x.dtype, np.floating) or x.dtype == ml_dtypes.bfloat16):
        return pool(x, axes, storage_order)
    nan = np.isnan(x.astype(np.float64))
    if not nan.any():
        return pool(x, axes, storage_order)
    minus_inf = np.array(-np.inf).astype(x.dtype)
    y, indices = pool(np.where(nan, minus_inf, x), axes, storage_order)
    only_nan, _ = pool(np.where(nan, minus_inf, np.zeros((), x.dtype)), axes, storage_order)
    lowest = np.array(_finfo(x.dtype).min).astype(x.dtype)
    return np.where(np.isneginf(only_nan.astype(np.float64)), lowest, y), indices


def _nan_resets_maximum(y, indices, x, axes):
    """A running maximum m = maxps(m, v) over each window's elements in row-major order: x86's
    maxps returns its second operand when either is NaN, so the element after a NaN replaces it."""
    if not np.issubdtype(x.dtype, np.floating) and x.dtype != ml_dtypes.bfloat16:
        return y, indices
    running, started = _reduced(x.astype(np.float64), axes, y.shape,
                                lambda kept, v: np.where(np.isnan(kept) | np.isnan(v), v, np.maximum(kept, v)), None)
    return np.where(started, running, y.astype(np.float64)).astype(x.dtype), indices


def _maxps(kept: np.ndarray, value: np.ndarray) -> np.ndarray:
    """x86's maxps(kept, value): ``kept`` where it is greater, else ``value`` (NaN on either side,
    and -0.0 against +0.0, give ``value``)."""
    return np.where(kept > value, kept, value)


def _std_max(kept: np.ndarray, value: np.ndarray) -> np.ndarray:
    """C++'s std::max(kept, value): ``value`` where ``kept`` is less, else ``kept`` (NaN never enters)."""
    return np.where(kept < value, value, kept)


def _as_mlas_pools(y, indices, x, axes):
    """MLAS's float pooling (ONNX Runtime's MaxPool without Indices), kernel by kernel as it picks
    them, each seeded at the lowest finite value:
    - a window that is the whole input (stride 1, no pads): four lanes down the flattened plane with
      maxps, the lanes then paired with maxps, the last elements (the plane's size modulo 4) with
      std::max;
    - rank 2 or 3 with the last stride at most 2 and kernels of at most 32: first down each column of
      the window (the other axes, padding left out; rank 3 seeded, rank 2 from its first row), with
      maxps, with std::max in the last columns (the row's width modulo 4); then along the row of
      those columns, padding read as the seed, with maxps;
    - otherwise: std::max over the window in row-major order.
    maxps keeps the running value only where it is greater, so the element compared after a NaN
    replaces it and a NaN compared last stays; std::max passes NaN over. Only the windows holding
    NaN take these answers (the seed's own effect on -inf is accumulator_starts_at_lowest_finite's,
    the order of signed zeros an open question's)."""
    if not (np.issubdtype(x.dtype, np.floating) or x.dtype == ml_dtypes.bfloat16) or any(a.dilation != 1 for a in axes):
        return y, indices
    planes = x.astype(np.float64)
    holds_nan = _reduced(np.isnan(planes).astype(np.float64), axes, y.shape, np.maximum, 0.0)[0] > 0
    if not holds_nan.any():
        return y, indices
    # MLAS pools float32 alone: a narrower type is pooled in float32, and a seed kept comes back as -inf
    lowest = float(_finfo(np.float32 if x.dtype.itemsize < 4 else x.dtype).min)
    last = axes[-1]
    if all(a.kernel == a.size and a.stride == 1 and a.pad_begin == a.pad_end == 0 for a in axes):
        pooled = _mlas_global(planes.reshape(planes.shape[:2] + (-1,)), lowest).reshape(y.shape)
    elif 2 <= len(axes) <= 3 and last.stride <= 2 and all(a.kernel <= 32 for a in axes) \
            and last.pad_begin + last.pad_end + last.size <= 2048 - 3:  # its row buffer, 3 kept for a vector's over-read
        pooled = _mlas_rows_of_columns(planes, axes, lowest)
    else:
        pooled = _reduced(planes, axes, y.shape, _std_max, lowest)[0]
    with np.errstate(over="ignore"):
        return np.where(holds_nan, pooled, y.astype(np.float64)).astype(x.dtype), indices


def _mlas_global(flat: np.ndarray, lowest: float) -> np.ndarray:
    lanes = np.full(flat.shape[:-1] + (4,), lowest)
    whole = flat.shape[-1] // 4 * 4
    for start in range(0, whole, 4):
        lanes = _maxps(lanes, flat[..., start:start + 4])
    result = _maxps(_maxps(lanes[..., 0], lanes[..., 2]), _maxps(lanes[..., 1], lanes[..., 3]))
    for at in range(whole, flat.shape[-1]):
        result = _std_max(result, flat[..., at])
    return result


def _reduced(planes: np.ndarray, axes, shape: tuple, combine: Callable,
             seed: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Each window's elements in row-major order, padding left out, folded with ``combine`` from
    ``seed`` (None: from the window's first element, -inf where it holds none); and whether each
    window holds an element."""
    outs = np.meshgrid(*[np.arange(a.out) for a in axes], indexing="ij")
    running = np.full(shape, -np.inf if seed is None else seed)
    started = np.zeros(shape, bool)
    for tap in itertools.product(*(range(a.kernel) for a in axes)):
        at = [o * a.stride - a.pad_begin + j * a.dilation for o, a, j in zip(outs, axes, tap)]
        inside = np.logical_and.reduce([(p >= 0) & (p < a.size) for p, a in zip(at, axes)])
        v = planes[(...,) + tuple(np.clip(p, 0, a.size - 1) for p, a in zip(at, axes))]
        first = inside & ~started if seed is None else np.zeros_like(inside)
        running = np.where(first, v, np.where(inside, combine(running, v), running))
        started = started | inside
    return running, started


def _mlas_rows_of_columns(planes: np.ndarray, axes, lowest: float) -> np.ndarray:
    lead, last = axes[:-1], axes[-1]
    width = last.size
    # the columns a vector covers; the last (the width modulo 4), one at a time
    vector = (np.arange(width) < width // 4 * 4).reshape((width,) + (1,) * len(lead))
    # down each column: every output position of the other axes, at every input column (the last
    # axis moved before them, kept whole)
    columns = _reduced(np.moveaxis(planes, -1, 2), lead, planes.shape[:2] + (width,) + tuple(a.out for a in lead),
                       lambda kept, value: np.where(vector, _maxps(kept, value), _std_max(kept, value)),
                       lowest if len(axes) == 3 else None)[0]
    columns = np.moveaxis(columns, 2, -1)
    length = max((last.out - 1) * last.stride + last.kernel, last.pad_begin + width)
    row = np.full(columns.shape[:-1] + (length,), lowest)
    row[..., last.pad_begin:last.pad_begin + width] = columns
    starts = np.arange(last.out) * last.stride
    result = row[..., starts]
    for k in range(1, last.kernel):
        result = _maxps(result, row[..., starts + k])
    return result


def _nan_folded(unrolled: int | None, padding_kept: bool = False) -> Callable:
    """A maximum taken by comparison, ``m = (m < v) ? v : m``, as a compiler lays out its loops:
    the window's last ``unrolled`` axes (all where None) folded from their first element in the
    input (padding left out, as max(-inf, v) folds to v; ``padding_kept``: from its first position,
    padding read as -inf, where the compiler masks the load instead), and each such run then compared into a
    maximum that starts at -inf. NaN loses every comparison it is second in: it comes out only
    where it leads a fold of the whole window, and a run it leads is lost. Where the value changes,
    its index is the first element of the window holding it."""
    def folded(y, indices, x, axes):
        if not np.issubdtype(x.dtype, np.floating) and x.dtype != ml_dtypes.bfloat16:
            return y, indices
        planes = x.astype(np.float64)
        if not np.isnan(planes).any() or unrolled is not None and unrolled >= len(axes):
            return y, indices
        key = ("fold", unrolled, padding_kept, x.dtype.str, x.shape, x.tobytes(), tuple(axes))
        if _REFERENCE_POOLS is not None and key in _REFERENCE_POOLS:  # the same fold under another model
            maximum, anywhere = _REFERENCE_POOLS[key]
        else:
            maximum, anywhere = _fold(planes, axes, y.shape, len(axes) if unrolled is None else unrolled, padding_kept)
            if _REFERENCE_POOLS is not None:
                _REFERENCE_POOLS[key] = (maximum, anywhere)
        result = np.where(anywhere, maximum, y.astype(np.float64)).astype(x.dtype)
        if indices is None or same_bits(result, y).all():
            return result, indices
        first = _first_equal(result, planes, axes, key)
        origins = _plane_origins(y, max(int(np.prod(x.shape[2:])), 1))
        return result, np.where(~same_bits(result, y) & (first >= 0), origins + first,
                                indices).astype(indices.dtype)
    return folded


def _fold(planes: np.ndarray, axes, shape: tuple, inner: int, padding_kept: bool) -> tuple[np.ndarray, np.ndarray]:
    """``_nan_folded``'s maximum of each window, and whether the window holds an input element."""
    outs = np.meshgrid(*[np.arange(a.out) for a in axes], indexing="ij")
    maximum = np.full(shape, -np.inf)
    anywhere = np.zeros(shape, bool)
    for lead in itertools.product(*(range(a.kernel) for a in axes[:len(axes) - inner])):
        run = np.full(shape, np.nan)
        started = np.zeros(shape, bool)
        for rest in itertools.product(*(range(a.kernel) for a in axes[len(axes) - inner:])):
            at = [o * a.stride - a.pad_begin + j * a.dilation for o, a, j in zip(outs, axes, lead + rest)]
            inside = np.logical_and.reduce([(p >= 0) & (p < a.size) for p, a in zip(at, axes)])
            v = planes[(...,) + tuple(np.clip(p, 0, a.size - 1) for p, a in zip(at, axes))]
            if padding_kept:
                v, inside = np.where(inside, v, -np.inf), np.ones_like(inside)
            run = np.where(inside & started, np.where(run < v, v, run), np.where(inside & ~started, v, run))
            started |= inside
        if inner == len(axes):
            maximum = run
        else:
            run = np.where(started, run, -np.inf)
            maximum = np.where(maximum < run, run, maximum)
        anywhere |= started
    return maximum, anywhere


def _indices_per_plane(y, indices, x, axes):
    """Indices within their (n, c) plane (one past its plane's last element stays so)."""
    plane = max(int(np.prod(x.shape[2:])), 1)
    within = np.where(indices >= 0, indices % plane, indices)
    if indices.shape == y.shape:
        within = np.where(indices - _plane_origins(y, plane) == plane, plane, within)
    return y, within


def _indices_per_batch_element(y, indices, x, axes):
    """Indices within their batch element: N's offset left out, C's kept."""
    if indices.ndim < 2:
        return y, indices
    element = int(np.prod(x.shape[1:]))
    origin = np.arange(indices.shape[0]).reshape((-1,) + (1,) * (indices.ndim - 1)) * element
    return y, np.where(indices >= 0, indices - origin, indices)


def _nothing_selected_gives_zero(x, axes, storage_order, pool):
    """A running maximum that starts at the type's lowest finite value and moves only on a greater
    value (NaN never is), and answers 0 at its plane's first element where it never moved: a window
    of NaN, -inf and the lowest value only gives 0."""
    integer = np.issubdtype(x.dtype, np.integer)
    lowest = np.array(np.iinfo(x.dtype).min if integer else _finfo(x.dtype).min, x.dtype)
    with np.errstate(invalid="ignore"):
        y, indices = pool(np.where(x > lowest, x, lowest), axes, storage_order)
        unmoved = y.astype(np.float64) <= float(lowest)
    if not unmoved.any():
        return y, indices
    y = np.where(unmoved, np.zeros((), y.dtype), y)
    if indices is not None and y.ndim >= 2:
        indices = np.where(unmoved, np.broadcast_to(_plane_origins(y, int(np.prod(x.shape[2:]))), y.shape), indices)
    return y, indices


def _first_equal(y: np.ndarray, planes: np.ndarray, axes, key: tuple | None = None) -> np.ndarray:
    """For each output, the position in its plane of the first element of its window (row-major)
    equal to it, NaN to NaN; -1 where none is (``key``: the input's, to share it while one item is
    diagnosed)."""
    if key is not None and _REFERENCE_POOLS is not None:
        key = ("first", y.dtype.str, y.tobytes(), *key[3:])
        if key not in _REFERENCE_POOLS:
            _REFERENCE_POOLS[key] = (_first_equal(y, planes, axes), y)
        return _REFERENCE_POOLS[key][0]
    wanted = y.astype(np.float64)
    outs = np.meshgrid(*[np.arange(a.out) for a in axes], indexing="ij")
    first = np.full(y.shape, -1, np.int64)
    for tap in itertools.product(*(range(a.kernel) for a in axes)):
        at = [o * a.stride - a.pad_begin + j * a.dilation for o, a, j in zip(outs, axes, tap)]
        inside = np.logical_and.reduce([(p >= 0) & (p < a.size) for p, a in zip(at, axes)])
        clipped = tuple(np.clip(p, 0, a.size - 1) for p, a in zip(at, axes))
        v = planes[(...,) + clipped]
        hit = inside & (first < 0) & ((v == wanted) | (np.isnan(v) & np.isnan(wanted)))
        first = np.where(hit, np.ravel_multi_index(clipped, [a.size for a in axes]), first)
    return first


def _index_sought_by_equality(y, indices, x, axes):
    """Indices found after the maximum, as the first element of the window equal to it: a maximum
    that no element equals (NaN, or the -inf a loop starts from over a window of NaN) points one
    past the last element of its plane."""
    if indices is None or not (np.issubdtype(y.dtype, np.floating) or y.dtype == ml_dtypes.bfloat16):
        return y, indices
    planes = x.astype(np.float64)
    if not np.isnan(planes).any():  # every maximum is one of its window's elements
        return y, indices
    found = _first_equal(np.where(np.isnan(y.astype(np.float64)), np.inf, y), planes, axes) >= 0
    found &= ~np.isnan(y.astype(np.float64))  # NaN equals nothing
    if found.all():
        return y, indices
    plane = max(int(np.prod(x.shape[2:])), 1)
    return y, np.where(found, indices, np.broadcast_to(_plane_origins(y, plane) + plane, y.shape)).astype(indices.dtype)


def _index_in_padded_layout(y, indices, x, axes):
    padded = [a.pad_begin + a.size + a.pad_end for a in axes]
    plane, within = np.divmod(np.maximum(indices, 0), max(int(np.prod(x.shape[2:])), 1))
    coords = np.unravel_index(within, x.shape[2:]) if x.size else [within] * len(axes)
    flat = plane
    for c, a, extent in zip(coords, axes, padded):
        flat = flat * extent + c + a.pad_begin
    return y, np.where(indices >= 0, flat, indices)


def _indices_transposed(last_two: bool) -> Callable:
    """Row-major Indices with the tensor transposed for storage_order 1: its spatial axes reversed,
    or (``last_two``) its last two axes swapped, whatever they are (C and the one spatial axis in 1-D)."""
    def pooled_so(x, axes, storage_order, pool):
        y, indices = pool(x, axes, 0)
        if storage_order == 0 or indices is None:
            return y, indices
        order = (*range(indices.ndim - 2), indices.ndim - 1, indices.ndim - 2) if last_two else \
            (0, 1, *range(indices.ndim - 1, 1, -1))
        return y, np.ascontiguousarray(np.transpose(indices, order))
    return pooled_so


def _bytes_compared_as(view: Any, only: Any) -> Callable:
    """X of one-byte type ``only`` compared as the other signedness (``view``), its bits kept."""
    def pool_viewed(x, axes, storage_order, pool):
        if x.dtype != only:
            return pool(x, axes, storage_order)
        y, indices = pool(x.view(view), axes, storage_order)
        return y.view(only), indices
    return pool_viewed


SENTINEL = -16777216.0  # -2^24: the lowest float32 below which every integer is no longer exact


def _floor_at_sentinel(y, indices, x, axes):
    if np.issubdtype(x.dtype, np.integer):
        return y, indices
    with np.errstate(over="ignore"):
        return np.maximum(y.astype(np.float64), SENTINEL).astype(x.dtype), indices


def _loop_stops_at_begin_padding(y, indices, x, axes):
    """Window loops that stop at their first position outside the input (``for (k = 0; k < K &&
    in_range(start + k); ...)``) rather than skip it: a window that starts in the begin padding
    reads nothing, so it keeps the seed (the type's lowest value) and the index 0; the end
    padding, whose positions all follow the last element, is skipped as it should be."""
    starts_outside = np.zeros(y.shape[2:], dtype=bool)
    for axis, a in enumerate(axes):
        per_output = np.array([a.start(o) < 0 for o in range(a.out)], dtype=bool)
        starts_outside |= per_output.reshape([-1 if i == axis else 1 for i in range(len(axes))])
    if not starts_outside.any():
        return y, indices
    lowest = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
    starts_outside = np.broadcast_to(starts_outside, y.shape)
    y = np.where(starts_outside, np.array(lowest).astype(y.dtype), y)
    return y, None if indices is None else np.where(starts_outside, 0, indices)


def _kernel_clipped_to_padded_input(axes, auto_pad, ceil_mode):
    """A kernel longer than the padded input is clipped to it before the size formula: one window."""
    return [dataclasses.replace(a, out=1) if a.extent > a.pad_begin + a.size + a.pad_end else a for a in axes]


def _only_two_axes_pooled(axes, auto_pad, ceil_mode):
    return list(axes[:2]) + [Axis(a.size, 1, 1, 1, 0, 0, a.size) for a in axes[2:]]


def _begin_pads_on_both_sides(attrs: dict) -> dict:
    pads = attrs.get("pads")
    if not pads:
        return attrs
    rank = len(pads) // 2
    return with_attributes(attrs, pads=list(pads[:rank]) * 2)


def _subnormals_flushed(y, indices, x, axes):
    if not (np.issubdtype(y.dtype, np.floating) or y.dtype == ml_dtypes.bfloat16):
        return y, indices
    wide = y.astype(np.float64)
    subnormal = (wide != 0) & (np.abs(wide) < float(_finfo(y.dtype).smallest_normal))
    return np.where(subnormal, np.copysign(0.0, wide), wide).astype(y.dtype), indices


def _unpool_per_plane(x, indices, shape, default_shape, unpool):
    plane = int(np.prod(shape[2:]))
    offsets = np.arange(int(np.prod(x.shape[:2]))).reshape(x.shape[:2] + (1,) * (x.ndim - 2)) * plane
    return unpool(x, indices + offsets, shape, default_shape)


def _unpool_summed_per_plane(x, indices, shape, default_shape, unpool):
    """Each value added to the zeros at its index within its own (n, c) plane (a one-hot product
    summed): the other planes' indices write nothing, repeated indices add up, and -0.0 + 0.0 is
    +0.0. An output of another batch or channel count is another bug's: the planes are X's."""
    if tuple(shape[:2]) != tuple(x.shape[:2]):
        return _unpool_per_plane(x, indices, shape, default_shape, unpool)
    planes, plane = int(np.prod(x.shape[:2])), int(np.prod(shape[2:]))
    wide = np.int64 if np.issubdtype(x.dtype, np.integer) else np.float64
    summed = np.zeros((planes, plane), wide)
    values, at = x.astype(wide).reshape(planes, -1), indices.reshape(planes, -1)
    for p in range(planes):
        inside = (at[p] >= 0) & (at[p] < plane)
        np.add.at(summed[p], at[p][inside], values[p][inside])
    with np.errstate(over="ignore", invalid="ignore"):
        return summed.astype(x.dtype).reshape(tuple(shape))


def _pads_paired_from_the_last_axis(pads):
    """ONNX's pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...] read as torch's F.pad reads its
    pairs, (begin, end) from the last axis back: each axis's total, as the first ``rank`` begins
    (only the totals enter MaxUnpool's default shape)."""
    rank = len(pads) // 2
    totals = [0] * rank
    for j in range(rank):
        totals[rank - 1 - j] = pads[2 * j] + pads[2 * j + 1]
    return totals + [0] * rank


def _index_wrapped_where_no_element(y, indices, x, axes):
    """A window with no element of the input (over padding only): the argmax of a tensor of
    positions padded with int32's lowest value, subtracted from the plane's size, wraps in int32."""
    if indices is None or not axes:
        return y, indices
    empty = np.zeros(y.shape[2:], dtype=bool)
    for axis, a in enumerate(axes):
        per_output = np.array([not a.holds_an_element(o) for o in range(a.out)], dtype=bool)
        empty |= per_output.reshape([-1 if i == axis else 1 for i in range(len(axes))])
    wrapped = (int(np.prod(x.shape[2:])) + 2**31 + 2**31) % 2**32 - 2**31
    return y, np.where(np.broadcast_to(empty, y.shape), np.array(wrapped, indices.dtype), indices)


def _unpool_ones_elsewhere(x, indices, shape, default_shape, unpool):
    y = unpool(x, indices, shape, default_shape)
    written = np.zeros(y.size, dtype=bool)
    written[indices.reshape(-1)] = True
    return np.where(written.reshape(y.shape), y, np.ones_like(y))


def openvino_geometry(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the axes of an OpenVINO MaxPool: change(axes, auto_pad, rounding_type) -> axes."""
    def axes(cls, domain, attrs, spatial):
        result = base(cls, "axes")(domain, attrs, spatial)
        if domain != OPENVINO_DOMAIN:
            return result
        return tuple(change(result, attrs.get("auto_pad", "explicit"), attrs.get("rounding_type", "floor")))
    return variant(axes=axes)


def _onnx_drop_rule(axes, auto_pad, rounding_type):
    """ONNX's ceil_mode rule: drop a last window that starts past the input."""
    return [dataclasses.replace(a, out=a.out - 1) if a.out > 1 and (a.out - 1) * a.stride >= a.size + a.pad_begin
            else a for a in axes]


def _attribute_dropped(name: str) -> type[ReferenceBackend]:
    """The OpenVINO node runs as if ``name`` were not set."""
    def attributes(cls, domain, attrs):
        return {k: v for k, v in attrs.items() if k != name} if domain == OPENVINO_DOMAIN else attrs
    return variant(attributes=attributes)


SAME_SWAPPED = {"SAME_UPPER": "SAME_LOWER", "SAME_LOWER": "SAME_UPPER"}


def _same_swapped(attrs: dict) -> dict:
    auto_pad = attrs.get("auto_pad")
    return with_attributes(attrs, auto_pad=SAME_SWAPPED.get(auto_pad, auto_pad) if isinstance(auto_pad, str) else auto_pad)


def _interleave_pads(pads):
    if not pads:
        return pads
    return list(pads[0::2]) + list(pads[1::2])


def with_attributes(attrs: dict, **changes) -> dict:
    """``attrs`` with ``changes``; a change to None removes the attribute."""
    return {k: v for k, v in {**attrs, **changes}.items() if v is not None}


def _pads(facts: Facts) -> bool:
    """Whether a window may reach past the input: explicit pads, SAME, or a rounded-up size."""
    a = facts.attributes
    if facts.domain == OPENVINO_DOMAIN:
        return facts.has("pads_begin") and any(a["pads_begin"]) or facts.has("pads_end") and any(a["pads_end"]) or \
            str(a.get("auto_pad", "")).startswith("same") or a.get("rounding_type", "floor") != "floor"
    return facts.has("pads") and any(a["pads"]) or str(a.get("auto_pad", "")).startswith("SAME") or \
        a.get("ceil_mode", 0) == 1


def _asymmetric(facts: Facts) -> bool:
    pads = facts.attributes.get("pads") or []
    return len(pads) % 2 == 0 and pads[:len(pads) // 2] != pads[len(pads) // 2:]


def _floating(facts: Facts) -> bool:
    return facts.dtype is not None and (np.issubdtype(facts.dtype, np.floating) or facts.dtype == ml_dtypes.bfloat16)


def _of(dtype: Any) -> Callable[[Facts], bool]:
    return lambda facts: facts.pools and facts.dtype == dtype


FAMILIES = {"finite_value_for_minus_inf": "a finite seed or padding value stands in for -inf (the lowest value, a sentinel)",
            "indices_tensor_transposed": "storage_order 1 transposes the Indices tensor instead of counting positions column-major",
            "nan_lost_by_comparison": "NaN loses comparisons: a maximum taken as m = (m < v) ? v : m passes it over "
                                      "unless it leads a folded window, and an index sought by equality never finds it"}
SEEN_FUZZ = "the fuzz's self-test and the mutation self-test (a variant built as a plausible kernel bug)"

DEFECTS: list[DefectModel] = [
    DefectModel("ceil_mode_ignored", "ceil_mode is read but the size is always rounded down",
                SEEN_FUZZ,
                geometry(lambda a: with_attributes(a, ceil_mode=0)), lambda f: f.onnx_pool and f.has("ceil_mode", 0)),
    DefectModel("floor_as_ceil", "the output size is always rounded up", SEEN_FUZZ,
                geometry(lambda a: with_attributes(a, ceil_mode=1)), lambda f: f.onnx_pool and not f.has("ceil_mode", 0)),
    DefectModel("ceil_drops_window_on_last_element",
                "ceil_mode's drop rule is off by one: a window starting on the last element is dropped too",
                SEEN_FUZZ,
                axes_result(_drop_window_on_last_element), lambda f: f.onnx_pool and f.has("ceil_mode", 0)),
    DefectModel("output_size_truncated",
                "output sizes are divided with truncation: a negative numerator gives one window too many",
                "ONNX Runtime's CPU kernels and onnx's shape inference (expectations/ort.yaml, "
                "negative_span_not_a_multiple_of_the_stride)",
                axes_from(truncated_sizes), lambda f: f.onnx_pool and f.attributes.get("auto_pad", "NOTSET") in ("NOTSET", "VALID", "")),
    DefectModel("same_split_swapped", "SAME_UPPER is placed as SAME_LOWER and SAME_LOWER as SAME_UPPER",
                "a vendor trial of a runtime new to us (issue 38: SAME_LOWER placed as SAME_UPPER)",
                geometry(_same_swapped),
                lambda f: f.onnx_pool and str(f.attributes.get("auto_pad", "")).startswith("SAME")),
    DefectModel("same_total_without_dilation", "the SAME pad total leaves the dilation out of the kernel extent",
                "tinygrad 0.14 (expectations/tinygrad.yaml: pad totals leave dilation out)", axes_result(_same_total_without_dilation),
                lambda f: f.onnx_pool and str(f.attributes.get("auto_pad", "")).startswith("SAME") and f.has("dilations")),
    DefectModel("valid_size_without_dilation", "VALID's output size leaves the dilation out of the kernel extent",
                SEEN_FUZZ, axes_result(_valid_size_without_dilation),
                lambda f: f.onnx_pool and f.attributes.get("auto_pad") == "VALID" and f.has("dilations")),
    DefectModel("dilations_ignored", "dilations are read but every kernel is dense",
                SEEN_FUZZ, geometry(lambda a: with_attributes(a, dilations=None)),
                lambda f: f.onnx_pool and f.has("dilations") and any(d != 1 for d in f.attributes["dilations"])),
    DefectModel("pads_interleaved", "pads are read as per-axis pairs [x1_begin, x1_end, x2_begin, x2_end]",
                "tinygrad 0.14 reads MaxUnpool's pads so (expectations/tinygrad.yaml); here MaxPool's",
                geometry(lambda a: with_attributes(a, pads=_interleave_pads(a.get("pads")))),
                lambda f: f.onnx_pool and f.has("pads") and len(f.attributes["pads"]) > 2),
    DefectModel("end_pads_ignored", "only the begin pads are applied", SEEN_FUZZ,
                geometry(lambda a: with_attributes(a, pads=list(a["pads"][:len(a["kernel_shape"])]) + [0] * len(a["kernel_shape"])
                                                   if a.get("pads") else None)),
                lambda f: f.onnx_pool and f.has("pads")),
    DefectModel("strides_reversed", "strides are applied to the axes in reverse order", SEEN_FUZZ,
                geometry(lambda a: with_attributes(a, strides=list(a["strides"])[::-1] if a.get("strides") else None)),
                lambda f: f.onnx_pool and f.has("strides") and len(set(f.attributes["strides"])) > 1),
    DefectModel("kernel_reversed", "kernel_shape is applied to the axes in reverse order", SEEN_FUZZ,
                geometry(lambda a: with_attributes(a, kernel_shape=list(a["kernel_shape"])[::-1])),
                lambda f: f.onnx_pool and len(set(f.attributes.get("kernel_shape", []))) > 1),
    DefectModel("default_stride_is_kernel", "a missing strides attribute defaults to the kernel size (Keras' convention)",
                SEEN_FUZZ, geometry(lambda a: with_attributes(a, strides=a.get("strides") or list(a["kernel_shape"]))),
                lambda f: f.onnx_pool and not f.has("strides")),
    DefectModel("auto_pad_ignored", "auto_pad is read but explicit pads (none) are used", SEEN_FUZZ,
                geometry(lambda a: with_attributes(a, auto_pad="NOTSET")),
                lambda f: f.onnx_pool and f.attributes.get("auto_pad", "NOTSET") not in ("NOTSET", "")),
    DefectModel("kernel_clipped_to_padded_input",
                "a kernel longer than the padded input is clipped to it: one window over the whole input, where "
                "the documents give none", "MNN 3.6.1, a vendor trial (ShapePool takes min(kernel, padded input))",
                axes_result(_kernel_clipped_to_padded_input), lambda f: f.onnx_pool),
    DefectModel("only_two_spatial_axes_pooled",
                "only the first two spatial axes are pooled: a 2-D kernel takes every rank above it",
                "MNN 3.6.1, a vendor trial (four spatial axes take its 2-D path)",
                axes_result(_only_two_axes_pooled), lambda f: f.onnx_pool and len(f.attributes.get("kernel_shape", [])) > 2),
    DefectModel("begin_pads_on_both_sides", "the begin pads are applied on both sides; the end pads are ignored",
                "MNN 3.6.1, a vendor trial (its 3-D pooling reads three pads)",
                geometry(_begin_pads_on_both_sides), lambda f: f.onnx_pool and _asymmetric(f)),
    DefectModel("window_loop_stops_at_begin_padding",
                "a window's loop stops at its first position outside the input instead of skipping it: a window "
                "that starts in the begin padding reads nothing (the seed, index 0)",
                "MNN 3.6.1, a vendor trial (poolingMaxWithRedice's loops: for (kh = 0; kh < kH && ih + kh >= 0 ...))",
                with_results(_loop_stops_at_begin_padding), lambda f: f.pools and _pads(f)),
    DefectModel("padding_is_zero", "padding takes part in the maximum with the value 0",
                SEEN_FUZZ, pooled(_zero_padding), lambda f: f.pools and _pads(f)),
    DefectModel("padding_is_lowest_finite",
                "padding takes part in the maximum with the lowest finite value: -inf maxima next to padding come back finite",
                SEEN_FUZZ, pooled(padding_at_lowest_finite(False)), lambda f: f.pools and _pads(f) and _floating(f),
                touches="Y", family="finite_value_for_minus_inf"),
    DefectModel("last_axis_padding_is_lowest_finite",
                "padding along the last spatial axis takes part in the maximum with the lowest finite value (the "
                "other axes' windows are clipped): -inf maxima next to it come back finite",
                "ONNX Runtime's float32 MaxPool without Indices (expectations/ort.yaml, maximum_equals_pad_value)",
                pooled(padding_at_lowest_finite(True)), lambda f: f.pools and _pads(f) and _floating(f),
                touches="Y", family="finite_value_for_minus_inf"),
    DefectModel("padding_wins_at_lowest", "padding takes part with the lowest value and wins ties, so indices point at it",
                SEEN_FUZZ, with_results(_padding_wins_at_lowest), lambda f: f.pools and f.wants_indices and _pads(f), touches="Indices"),
    DefectModel("accumulator_starts_at_lowest_finite", "the running maximum starts at the lowest finite value, so -inf never wins",
                "OpenVINO's reference (max_pool.hpp seeds with std::numeric_limits<T>::lowest())",
                with_results(_floor_at_lowest_finite), lambda f: f.pools and _floating(f),
                touches="Y", family="finite_value_for_minus_inf"),
    DefectModel("accumulator_starts_at_sentinel",
                "the running maximum starts at the sentinel -2^24, so maxima below it come back as -16777216",
                "MNN 3.6.1, a vendor trial (poolingMax's MAXVALUE template argument)",
                with_results(_floor_at_sentinel), lambda f: f.pools and _floating(f), touches="Y",
                family="finite_value_for_minus_inf"),
    DefectModel("maximum_seeded_at_plane_origin",
                "the running maximum starts at the type's lowest value at the plane's first element and moves only "
                "on a greater value: windows of -inf or of the lowest value give the lowest finite value and the "
                "plane's first index", "OpenVINO's reference (max_pool.hpp: argmax starts at the plane's element 0)",
                with_results(_seeded_at_plane_origin), lambda f: f.pools and (f.wants_indices or _floating(f)),
                family="finite_value_for_minus_inf"),
    DefectModel("float16_seeded_in_float32_at_plane_origin",
                "float16 is pooled in float32 by a running maximum seeded at float32's lowest value at the plane's "
                "first element: a window of -inf keeps -inf (the seed, cast back) but points at the plane's first "
                "element", "OpenVINO's CPU plugin (float16 runs in float32, its inference precision; max_pool.hpp's seed)",
                _seeded_in_float32(np.float16), _of(np.float16), family="finite_value_for_minus_inf"),
    DefectModel("float64_seeded_in_float32_saturated",
                "float64 is pooled in float32 (infinities clamped to +-3.4028235e+38) by a running maximum seeded at "
                "float32's lowest value at the plane's first element: a window of -inf gives -3.4028235e+38 and "
                "points at the plane's first element",
                "OpenVINO's CPU plugin (float64 runs in float32, its inference precision, converted with saturation; "
                "max_pool.hpp's seed)", _seeded_in_float32(np.float64, saturating=True), _of(np.float64),
                family="finite_value_for_minus_inf"),
    DefectModel("nan_never_selected_seed_kept",
                "NaN is never selected: a window's other elements give its maximum, and a window of NaN only the "
                "lowest finite value (the seed)", "ONNX Runtime's float32 MaxPool without Indices (expectations/ort.yaml, "
                "nan_resets_maximum: MLAS seeds with the lowest finite float) and OpenVINO's CPU plugin "
                "(expectations/openvino.yaml, nan-windows)", pooled(_nan_never_selected), lambda f: f.pools and _floating(f),
                needs="nan"),
    DefectModel("nan_compared_as_mlas_pools",
                "NaN as MLAS pools it: replaced by the element compared after it (x86 maxps) in the vector kernels, "
                "which take each column of the window, then the row; passed over (std::max) at their scalar edges "
                "and in the generic kernel",
                "ONNX Runtime's float32 MaxPool without Indices on 2-D and 3-D inputs (expectations/ort.yaml, "
                "nan-resets-running-maximum; onnxruntime/core/mlas/lib/pooling.cpp, MlasPool3DVectorKernel)",
                with_results(_as_mlas_pools), lambda f: f.pools and _floating(f), touches="Y", needs="nan",
                decides="nan-in-window"),
    DefectModel("nan_resets_running_maximum", "the element after a NaN replaces the running maximum (x86 maxps(maximum, x))",
                "x86 SIMD max kernels (maxps returns its second operand on NaN)", with_results(_nan_resets_maximum),
                lambda f: f.pools and _floating(f), touches="Y"),  # maxps also picks between -0.0 and 0.0
    DefectModel("nan_only_from_the_first_element",
                "a window's maximum is folded from its first element in the input, m = (m < v) ? v : m: NaN comes out "
                "only where it is that first element", "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C "
                "folds a window it unrolls so, max(-inf, v) over the padding folded to v)",
                with_results(_nan_folded(None)), lambda f: f.pools and _floating(f), family="nan_lost_by_comparison", needs="nan",
                decides="nan-in-window"),
    *(DefectModel(f"nan_leading_a_run_of_the_last_{count}_hides_it",
                  f"the window's last {words} folded from their first element, m = (m < v) ? v : m, and the runs "
                  "compared into a maximum from -inf: NaN never comes out, and a run that a NaN leads is lost",
                  "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C unrolls the last window axes and loops "
                  "over the others from -inf)", with_results(_nan_folded(unrolled)), lambda f: f.pools and _floating(f),
                  family="nan_lost_by_comparison", needs="nan",
                  decides="nan-in-window")
      for unrolled, count, words in ((1, "axis", "axis"), (2, "two_axes", "two axes"), (3, "three_axes", "three axes"))),
    *(DefectModel(f"{name}_padding_first", f"{title}, padding read as -inf in the fold (a masked load): NaN after "
                  "the padding is passed over", "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C masks the "
                  "padding's loads in some kernels)", with_results(_nan_folded(unrolled, padding_kept=True)),
                  lambda f: f.pools and _floating(f) and _pads(f), family="nan_lost_by_comparison", needs="nan",
                  decides="nan-in-window")
      for unrolled, name, title in ((None, "nan_only_from_the_first_element", "a window's maximum is folded from its "
                                     "first position, m = (m < v) ? v : m"),
                                    (1, "nan_leading_a_run_of_the_last_axis", "the window's last axis folded from its "
                                     "first position and the runs compared into a maximum from -inf"))),
    DefectModel("nan_passed_over_from_minus_inf",
                "a running maximum from -inf moved only by a greater value, m = (m < v) ? v : m: NaN never comes out, "
                "and a window of NaN only gives -inf", "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C "
                "loops over a window it does not unroll so)", with_results(_nan_folded(0)),
                lambda f: f.pools and _floating(f), family="nan_lost_by_comparison", needs="nan",
                decides="nan-in-window"),
    DefectModel("index_sought_by_equality",
                "Indices are sought after the maximum, as the first element equal to it: a maximum no element equals "
                "(NaN) points one past its plane's last element", "tinygrad 0.14 (Tensor.max_pool2d(return_indices="
                "True): pooled.eq(pooled.max(...)))", with_results(_index_sought_by_equality),
                lambda f: f.pools and f.wants_indices and _floating(f), touches="Indices", family="nan_lost_by_comparison",
                needs="nan"),
    DefectModel("accumulator_starts_at_zero", "the running maximum starts at 0, as if a ReLU were fused",
                SEEN_FUZZ, with_results(lambda y, i, x, a: (np.maximum(y, np.zeros((), y.dtype)), i)),
                lambda f: f.pools, touches="Y"),
    DefectModel("negative_zero_made_positive", "a maximum of -0.0 comes out as +0.0", SEEN_FUZZ,
                with_results(lambda y, i, x, a: (np.where(y.astype(np.float64) == 0, np.zeros((), y.dtype), y), i)),
                lambda f: f.pools and _floating(f), touches="Y"),
    DefectModel("subnormals_flushed", "subnormal maxima are flushed to zero (denormals-are-zero)",
                "OpenVINO's bfloat16 (expectations/openvino.yaml, wide_float_ranges)", with_results(_subnormals_flushed),
                lambda f: f.pools and _floating(f), touches="Y"),
    DefectModel("indices_per_plane", "Indices omit the N·C plane offset (they count within each plane, as PyTorch's do)",
                "tinygrad 0.14 (expectations/tinygrad.yaml: Tensor.max_pool2d(return_indices=True))",
                with_results(_indices_per_plane),
                lambda f: f.pools and f.wants_indices, touches="Indices"),
    DefectModel("indices_in_padded_layout", "Indices count positions of the padded tensor", SEEN_FUZZ,
                with_results(_index_in_padded_layout), lambda f: f.pools and f.wants_indices and _pads(f), touches="Indices"),
    DefectModel("storage_order_ignored", "storage_order 1 gives row-major Indices", SEEN_FUZZ,
                pooled(lambda x, axes, storage_order, pool: pool(x, axes, 0)),
                lambda f: f.onnx_pool and f.wants_indices and f.has("storage_order", 0), touches="Indices"),
    DefectModel("storage_order_reverses_indices_axes",
                "row-major Indices with their spatial axes reversed", "OpenVINO's ONNX frontend (pooling_factory.cpp: "
                "a Transpose of MaxPool-8's Indices; https://github.com/openvinotoolkit/openvino/issues/20879)",
                pooled(_indices_transposed(last_two=False)),
                lambda f: f.onnx_pool and f.wants_indices and f.has("storage_order", 0), touches="Indices",
                family="indices_tensor_transposed"),
    DefectModel("storage_order_swaps_last_two_indices_axes",
                "row-major Indices with their last two axes swapped (C and the spatial axis in 1-D)",
                "tinygrad 0.14 (expectations/tinygrad.yaml: idx.transpose(-2, -1))",
                pooled(_indices_transposed(last_two=True)),
                lambda f: f.onnx_pool and f.wants_indices and f.has("storage_order", 0), touches="Indices",
                family="indices_tensor_transposed"),
    DefectModel("storage_order_always_column", "Indices are column-major whatever storage_order says", SEEN_FUZZ,
                pooled(lambda x, axes, storage_order, pool: pool(x, axes, 1)),
                lambda f: f.onnx_pool and f.wants_indices and not f.has("storage_order", 0), touches="Indices"),
    DefectModel("indices_int32", "Indices come back as int32", "WebGPU runtimes without 64-bit integers",
                with_results(lambda y, i, x, a: (y, i.astype(np.int32))), lambda f: f.pools and f.wants_indices, touches="Indices"),
    DefectModel("float16_computed_as_float32", "float16 inputs give float32 outputs", SEEN_FUZZ,
                widened(np.float32, np.float16), _of(np.float16), touches="Y"),
    DefectModel("int8_compared_unsigned", "int8 values are compared as unsigned bytes",
                "a vendor trial of a runtime new to us (issue 38: unsigned compared as signed)",
                pooled(_bytes_compared_as(np.uint8, np.int8)), _of(np.int8)),
    DefectModel("uint8_compared_signed", "uint8 values are compared as signed bytes: 128 and above lose to smaller values",
                "MNN 3.6.1, a vendor trial (its one-byte kernel, CPUPoolInt8, compares int8)",
                pooled(_bytes_compared_as(np.int8, np.uint8)), _of(np.uint8)),
    DefectModel("bfloat16_through_float16", "bfloat16 is pooled through float16, losing its range", SEEN_FUZZ,
                through(np.float16, ml_dtypes.bfloat16), _of(ml_dtypes.bfloat16)),
    DefectModel("float64_through_float32", "float64 is pooled through float32", "OpenVINO's CPU plugin (expectations/openvino.yaml)",
                through(np.float32, np.float64), _of(np.float64)),
    DefectModel("float64_through_float32_saturated",
                "float64 is pooled through float32 by a saturating conversion: infinities become -+3.4028235e+38",
                "OpenVINO's CPU plugin (expectations/openvino.yaml: infinities become +-FLT_MAX)",
                through(np.float32, np.float64, saturating=True), _of(np.float64)),
    DefectModel("int32_through_float32", "int32 is pooled through float32: values beyond 2^24 are rounded",
                "OpenVINO's CPU plugin (expectations/openvino.yaml, wide_integers)", through(np.float32, np.int32),
                # int64 too: beneath a runtime that pools int64 as int32 (OpenVINO's) it is what pools
                lambda f: f.pools and f.dtype in (np.int32, np.int64)),
    DefectModel("int64_through_int32", "int64 is pooled as int32: values beyond 2^31 wrap",
                "OpenVINO's CPU plugin (https://github.com/openvinotoolkit/openvino/issues/35823)",
                through(np.int32, np.int64), _of(np.int64)),
    DefectModel("unpool_output_shape_ignored", "MaxUnpool ignores its output_shape input", SEEN_FUZZ,
                variant(unpool_shape=lambda cls, x_shape, attrs, output_shape: base(cls, "unpool_shape")(x_shape, attrs, None)),
                lambda f: f.op == "MaxUnpool" and f.output_shape_given),
    DefectModel("unpool_default_shape_without_pads", "MaxUnpool's default shape leaves the pads out", SEEN_FUZZ,
                variant(unpool_shape=lambda cls, x_shape, attrs, output_shape: base(cls, "unpool_shape")(
                    x_shape, with_attributes(attrs, pads=None) if output_shape is None else attrs, output_shape)),
                lambda f: f.op == "MaxUnpool" and f.has("pads") and not f.output_shape_given),
    DefectModel("unpool_indices_per_plane", "MaxUnpool reads Indices within each (n, c) plane",
                "tinygrad 0.14 (expectations/tinygrad.yaml: Tensor.max_unpool2d)",
                unpooled(_unpool_per_plane), lambda f: f.op == "MaxUnpool"),
    DefectModel("unpool_summed_per_plane", "MaxUnpool adds each value at its index within its (n, c) plane: other "
                "planes' values are lost, repeated indices add up, -0.0 becomes +0.0",
                "tinygrad 0.14 (expectations/tinygrad.yaml: Tensor.max_unpool2d, a one-hot product summed)",
                unpooled(_unpool_summed_per_plane), lambda f: f.op == "MaxUnpool"),
    DefectModel("unpool_pads_paired_from_the_last_axis",
                "MaxUnpool's pads are read as (begin, end) pairs from the last axis back (torch's F.pad order): "
                "the default shape gives one axis's pads to another",
                "tinygrad 0.14 (expectations/tinygrad.yaml: ONNX's pads passed to Tensor.max_unpool2d unconverted)",
                variant(unpool_shape=lambda cls, x_shape, attrs, output_shape: base(cls, "unpool_shape")(
                    x_shape, with_attributes(attrs, pads=_pads_paired_from_the_last_axis(attrs["pads"]))
                    if output_shape is None else attrs, output_shape)),
                lambda f: f.op == "MaxUnpool" and f.has("pads") and not f.output_shape_given and len(f.attributes["pads"]) > 2),
    DefectModel("index_wrapped_where_no_element",
                "a window over padding only gets the index plane size - 2^31 (an argmax over positions padded with "
                "int32's lowest value, wrapped)",
                "tinygrad 0.14 (expectations/tinygrad.yaml: Tensor.max_pool2d(return_indices=True))",
                with_results(_index_wrapped_where_no_element), lambda f: f.onnx_pool and f.wants_indices, touches="Indices"),
    DefectModel("unpool_not_zero_filled", "MaxUnpool leaves ones, not zeros, where nothing was written", SEEN_FUZZ,
                unpooled(_unpool_ones_elsewhere), lambda f: f.op == "MaxUnpool"),
    DefectModel("nhwc_layout_ignored", "an NHWC MaxPool reads X as (N, C, spatial...)", SEEN_FUZZ,
                variant(channels_last=lambda cls, domain, op_type: False), lambda f: f.pools and f.domain in NHWC_DOMAINS),
    DefectModel("activation_ignored", "the fused Relu or Clip is not applied", SEEN_FUZZ,
                variant(clamp=lambda cls, y, low, high: y), lambda f: f.pools and "activation" in f.attributes, touches="Y"),
    DefectModel("activation_bounds_swapped", "activation_params are read as [max, min]", SEEN_FUZZ,
                variant(clamp=lambda cls, y, low, high: base(cls, "clamp")(y, high, low)), lambda f: f.pools and "activation" in f.attributes, touches="Y"),
    DefectModel("openvino_ceil_drops_window", "OpenVINO's ceil drops a last window starting past the input, as ONNX's does",
                SEEN_FUZZ, openvino_geometry(_onnx_drop_rule),
                lambda f: f.domain == OPENVINO_DOMAIN and f.attributes.get("rounding_type") == "ceil"),
    DefectModel("openvino_axis_ignored", "OpenVINO's axis is ignored: Indices count over the whole tensor", SEEN_FUZZ,
                _attribute_dropped("axis"), lambda f: f.domain == OPENVINO_DOMAIN and f.wants_indices and f.has("axis", 0), touches="Indices"),
    DefectModel("openvino_index_type_ignored", "OpenVINO's index_element_type is ignored: Indices are always int64",
                SEEN_FUZZ, _attribute_dropped("index_element_type"),
                lambda f: f.domain == OPENVINO_DOMAIN and f.wants_indices and f.attributes.get("index_element_type") == "i32", touches="Indices"),
    DefectModel("openvino_dilations_ignored", "OpenVINO's dilations are read but every kernel is dense", SEEN_FUZZ,
                _attribute_dropped("dilations"),
                lambda f: f.domain == OPENVINO_DOMAIN and f.has("dilations") and any(d != 1 for d in f.attributes["dilations"])),
    # OpenCV DNN 5.0.0's Indices path (a vendor trial)
    DefectModel("indices_per_batch_element", "Indices omit the batch offset (they count within each batch element, "
                "its channels included)", "OpenCV DNN 5.0.0, a vendor trial (maxpool_layer.cpp, maxPoolNchwWithIndices: "
                "idx = (c * H + y) * W + x, with n never used)",
                with_results(_indices_per_batch_element), lambda f: f.pools and f.wants_indices, touches="Indices"),
    DefectModel("nothing_selected_gives_zero", "a window with nothing above the lowest finite value (-inf, NaN, the "
                "lowest itself) gives 0 at its plane's first element", "OpenCV DNN 5.0.0, a vendor trial "
                "(maxPoolNchwWithIndices: vmax starts at lowest(), moves on v > vmax, and idxmax < 0 writes 0)",
                pooled(_nothing_selected_gives_zero), lambda f: f.pools and f.wants_indices),
]
BY_NAME = {d.name: d for d in DEFECTS}


def family_of(name: str) -> str | None:
    """The family of a diagnosis's name: a single model's (not one under a reading, nor a pair)."""
    model = BY_NAME.get(name)
    return model.family if model is not None else None

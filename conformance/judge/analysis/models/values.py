"""Defect models of the values a maximum takes: the padding's and the seed's value, NaN, zero's
sign, subnormals, and a window with nothing above the lowest value."""

from __future__ import annotations

import itertools
from typing import Any, Callable

import ml_dtypes
import numpy as np

from reference_backend import ReferenceBackend

from ....semantics import Axis
from ...compare import same_bits
from .kit import DefectModel, Facts, SEEN_FUZZ, shared, finfo_of, of_type, has_pads, plane_origins, pooled, stacked, through, with_results


def _seeded_in_float32(only: Any, saturating: bool = False) -> type[ReferenceBackend]:
    """``only`` pooled in float32 (``saturating``: infinities clamped to its finite range on the
    way) by a running maximum seeded as ``_seeded_at_plane_origin`` seeds it, at float32's lowest
    value: cast back, the seed of a window of -inf is -inf again (or -FLT_MAX where ``only``
    holds it), and its index the plane's first element."""
    model = stacked(through(np.float32, only, saturating), with_results(_seeded_at_plane_origin))
    model.retypes = False  # type: ignore[attr-defined]  # one model, not a type beside another bug
    return model


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
        padded = np.pad(x, widths, constant_values=np.array(finfo_of(x.dtype).min, x.dtype))
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


def _floor_at_lowest_finite(y, indices, x, axes):
    if np.issubdtype(x.dtype, np.integer):
        return y, indices
    return np.maximum(y.astype(np.float64), float(finfo_of(x.dtype).min)).astype(x.dtype), indices


def _seeded_at_plane_origin(y, indices, x, axes):
    """A running maximum that starts at the type's lowest value, at the plane's first element, and
    moves only on a greater value: a window holding nothing greater (-inf, the lowest integer, no
    element) gives the lowest value and the plane's first index."""
    integer = np.issubdtype(x.dtype, np.integer)
    lowest = float(np.iinfo(x.dtype).min) if integer else float(finfo_of(x.dtype).min)
    wide = y.astype(np.float64)
    seeded = wide <= lowest
    if not integer:
        y = np.maximum(wide, lowest).astype(x.dtype)
    if indices is not None and y.ndim >= 2:
        indices = np.where(seeded, np.broadcast_to(plane_origins(y, int(np.prod(x.shape[2:]))), y.shape), indices)
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
    lowest = np.array(finfo_of(x.dtype).min).astype(x.dtype)
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
    lowest = float(finfo_of(np.float32 if x.dtype.itemsize < 4 else x.dtype).min)
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
        maximum, anywhere = shared(key, lambda: _fold(planes, axes, y.shape, len(axes) if unrolled is None else unrolled,
                                                      padding_kept))  # the same fold under another model
        result = np.where(anywhere, maximum, y.astype(np.float64)).astype(x.dtype)
        if indices is None or same_bits(result, y).all():
            return result, indices
        first = _first_equal(result, planes, axes, key)
        origins = plane_origins(y, max(int(np.prod(x.shape[2:])), 1))
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


def _first_equal(y: np.ndarray, planes: np.ndarray, axes, key: tuple | None = None) -> np.ndarray:
    """For each output, the position in its plane of the first element of its window (row-major)
    equal to it, NaN to NaN; -1 where none is (``key``: the input's, to share it while one item is
    diagnosed)."""
    if key is not None:
        return shared(("first", y.dtype.str, y.tobytes(), *key[3:]), lambda: (_first_equal(y, planes, axes), y))[0]
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
    return y, np.where(found, indices, np.broadcast_to(plane_origins(y, plane) + plane, y.shape)).astype(indices.dtype)


SENTINEL = -16777216.0  # -2^24: the lowest float32 below which every integer is no longer exact


def _floor_at_sentinel(y, indices, x, axes):
    if np.issubdtype(x.dtype, np.integer):
        return y, indices
    with np.errstate(over="ignore"):
        return np.maximum(y.astype(np.float64), SENTINEL).astype(x.dtype), indices


def _subnormals_flushed(y, indices, x, axes):
    if not (np.issubdtype(y.dtype, np.floating) or y.dtype == ml_dtypes.bfloat16):
        return y, indices
    wide = y.astype(np.float64)
    subnormal = (wide != 0) & (np.abs(wide) < float(finfo_of(y.dtype).smallest_normal))
    return np.where(subnormal, np.copysign(0.0, wide), wide).astype(y.dtype), indices


def floating(facts: Facts) -> bool:
    return facts.dtype is not None and (np.issubdtype(facts.dtype, np.floating) or facts.dtype == ml_dtypes.bfloat16)


MODELS: list[DefectModel] = [
    DefectModel("padding_is_zero", "padding takes part in the maximum with the value 0",
                SEEN_FUZZ, pooled(_zero_padding), lambda f: f.pools and has_pads(f)),
    DefectModel("padding_is_lowest_finite",
                "padding takes part in the maximum with the lowest finite value: -inf maxima next to padding come back finite",
                SEEN_FUZZ, pooled(padding_at_lowest_finite(False)), lambda f: f.pools and has_pads(f) and floating(f),
                touches="Y", family="finite_value_for_minus_inf"),
    DefectModel("last_axis_padding_is_lowest_finite",
                "padding along the last spatial axis takes part in the maximum with the lowest finite value (the "
                "other axes' windows are clipped): -inf maxima next to it come back finite",
                "ONNX Runtime's float32 MaxPool without Indices (expectations/ort.yaml, maximum_equals_pad_value)",
                pooled(padding_at_lowest_finite(True)), lambda f: f.pools and has_pads(f) and floating(f),
                touches="Y", family="finite_value_for_minus_inf"),
    DefectModel("padding_wins_at_lowest", "padding takes part with the lowest value and wins ties, so indices point at it",
                SEEN_FUZZ, with_results(_padding_wins_at_lowest), lambda f: f.pools and f.wants_indices and has_pads(f), touches="Indices"),
    DefectModel("accumulator_starts_at_lowest_finite", "the running maximum starts at the lowest finite value, so -inf never wins",
                "OpenVINO's reference (max_pool.hpp seeds with std::numeric_limits<T>::lowest())",
                with_results(_floor_at_lowest_finite), lambda f: f.pools and floating(f),
                touches="Y", family="finite_value_for_minus_inf"),
    DefectModel("accumulator_starts_at_sentinel",
                "the running maximum starts at the sentinel -2^24, so maxima below it come back as -16777216",
                "MNN 3.6.1, a vendor trial (poolingMax's MAXVALUE template argument)",
                with_results(_floor_at_sentinel), lambda f: f.pools and floating(f), touches="Y",
                family="finite_value_for_minus_inf"),
    DefectModel("maximum_seeded_at_plane_origin",
                "the running maximum starts at the type's lowest value at the plane's first element and moves only "
                "on a greater value: windows of -inf or of the lowest value give the lowest finite value and the "
                "plane's first index", "OpenVINO's reference (max_pool.hpp: argmax starts at the plane's element 0)",
                with_results(_seeded_at_plane_origin), lambda f: f.pools and (f.wants_indices or floating(f)),
                family="finite_value_for_minus_inf"),
    DefectModel("float16_seeded_in_float32_at_plane_origin",
                "float16 is pooled in float32 by a running maximum seeded at float32's lowest value at the plane's "
                "first element: a window of -inf keeps -inf (the seed, cast back) but points at the plane's first "
                "element", "OpenVINO's CPU plugin (float16 runs in float32, its inference precision; max_pool.hpp's seed)",
                _seeded_in_float32(np.float16), of_type(np.float16), family="finite_value_for_minus_inf"),
    DefectModel("float64_seeded_in_float32_saturated",
                "float64 is pooled in float32 (infinities clamped to +-3.4028235e+38) by a running maximum seeded at "
                "float32's lowest value at the plane's first element: a window of -inf gives -3.4028235e+38 and "
                "points at the plane's first element",
                "OpenVINO's CPU plugin (float64 runs in float32, its inference precision, converted with saturation; "
                "max_pool.hpp's seed)", _seeded_in_float32(np.float64, saturating=True), of_type(np.float64),
                family="finite_value_for_minus_inf"),
    DefectModel("nan_never_selected_seed_kept",
                "NaN is never selected: a window's other elements give its maximum, and a window of NaN only the "
                "lowest finite value (the seed)", "ONNX Runtime's float32 MaxPool without Indices (expectations/ort.yaml, "
                "nan_resets_maximum: MLAS seeds with the lowest finite float) and OpenVINO's CPU plugin "
                "(expectations/openvino.yaml, nan-windows)", pooled(_nan_never_selected), lambda f: f.pools and floating(f),
                needs="nan"),
    DefectModel("nan_compared_as_mlas_pools",
                "NaN as MLAS pools it: replaced by the element compared after it (x86 maxps) in the vector kernels, "
                "which take each column of the window, then the row; passed over (std::max) at their scalar edges "
                "and in the generic kernel",
                "ONNX Runtime's float32 MaxPool without Indices on 2-D and 3-D inputs (expectations/ort.yaml, "
                "nan-resets-running-maximum; onnxruntime/core/mlas/lib/pooling.cpp, MlasPool3DVectorKernel)",
                with_results(_as_mlas_pools), lambda f: f.pools and floating(f), touches="Y", needs="nan",
                decides="nan-in-window"),
    DefectModel("nan_resets_running_maximum", "the element after a NaN replaces the running maximum (x86 maxps(maximum, x))",
                "x86 SIMD max kernels (maxps returns its second operand on NaN)", with_results(_nan_resets_maximum),
                lambda f: f.pools and floating(f), touches="Y"),
    DefectModel("nan_only_from_the_first_element",
                "a window's maximum is folded from its first element in the input, m = (m < v) ? v : m: NaN comes out "
                "only where it is that first element", "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C "
                "folds a window it unrolls so, max(-inf, v) over the padding folded to v)",
                with_results(_nan_folded(None)), lambda f: f.pools and floating(f), family="nan_lost_by_comparison", needs="nan",
                decides="nan-in-window"),
    *(DefectModel(f"nan_leading_a_run_of_the_last_{count}_hides_it",
                  f"the window's last {words} folded from their first element, m = (m < v) ? v : m, and the runs "
                  "compared into a maximum from -inf: NaN never comes out, and a run that a NaN leads is lost",
                  "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C unrolls the last window axes and loops "
                  "over the others from -inf)", with_results(_nan_folded(unrolled)), lambda f: f.pools and floating(f),
                  family="nan_lost_by_comparison", needs="nan",
                  decides="nan-in-window")
      for unrolled, count, words in ((1, "axis", "axis"), (2, "two_axes", "two axes"), (3, "three_axes", "three axes"))),
    *(DefectModel(f"{name}_padding_first", f"{title}, padding read as -inf in the fold (a masked load): NaN after "
                  "the padding is passed over", "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C masks the "
                  "padding's loads in some kernels)", with_results(_nan_folded(unrolled, padding_kept=True)),
                  lambda f: f.pools and floating(f) and has_pads(f), family="nan_lost_by_comparison", needs="nan",
                  decides="nan-in-window")
      for unrolled, name, title in ((None, "nan_only_from_the_first_element", "a window's maximum is folded from its "
                                     "first position, m = (m < v) ? v : m"),
                                    (1, "nan_leading_a_run_of_the_last_axis", "the window's last axis folded from its "
                                     "first position and the runs compared into a maximum from -inf"))),
    DefectModel("nan_passed_over_from_minus_inf",
                "a running maximum from -inf moved only by a greater value, m = (m < v) ? v : m: NaN never comes out, "
                "and a window of NaN only gives -inf", "tinygrad 0.14 (expectations/tinygrad.yaml: its rendered C "
                "loops over a window it does not unroll so)", with_results(_nan_folded(0)),
                lambda f: f.pools and floating(f), family="nan_lost_by_comparison", needs="nan",
                decides="nan-in-window"),
    DefectModel("index_sought_by_equality",
                "Indices are sought after the maximum, as the first element equal to it: a maximum no element equals "
                "(NaN) points one past its plane's last element", "tinygrad 0.14 (Tensor.max_pool2d(return_indices="
                "True): pooled.eq(pooled.max(...)))", with_results(_index_sought_by_equality),
                lambda f: f.pools and f.wants_indices and floating(f), touches="Indices", family="nan_lost_by_comparison",
                needs="nan"),
    DefectModel("accumulator_starts_at_zero", "the running maximum starts at 0, as if a ReLU were fused",
                SEEN_FUZZ, with_results(lambda y, i, x, a: (np.maximum(y, np.zeros((), y.dtype)), i)),
                lambda f: f.pools, touches="Y"),
    DefectModel("negative_zero_made_positive", "a maximum of -0.0 comes out as +0.0", SEEN_FUZZ,
                with_results(lambda y, i, x, a: (np.where(y.astype(np.float64) == 0, np.zeros((), y.dtype), y), i)),
                lambda f: f.pools and floating(f), touches="Y"),
    DefectModel("subnormals_flushed", "subnormal maxima are flushed to zero (denormals-are-zero)",
                "OpenVINO's bfloat16 (expectations/openvino.yaml, wide_float_ranges)", with_results(_subnormals_flushed),
                lambda f: f.pools and floating(f), touches="Y"),
]

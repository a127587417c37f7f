"""The fast path: one N-d max pooling kernel for every MaxPool version, checked bit for bit against
the specification, the naive loops of ``naive.py`` (``tests/test_reference_vs_naive.py``, and
``conformance lock --update`` on every derived item whose expectation moves).

The choices it makes where the documents are silent are named in ``cases/ambiguities.yaml``:

* ties keep the first maximum in row-major window order;
* NaN propagates: the first NaN in a window is selected (``nan-in-window``);
* a window that covers only padding yields -inf (floats) or the type's lowest value (integers),
  with index -1 (``window-in-padding-only``).

How it stays exact and fast: max pooling is separable, so the values are pooled one spatial
axis at a time, a running ``np.maximum`` over strided views of the input in its own element
type, never over a padded copy (each kernel tap only touches the outputs whose window it falls
in). ``np.maximum`` returns an input element, but not always the first of equal ones (+0.0 and
-0.0) nor the first NaN; and it yields no position. Both come from a pass over the window's
taps in row-major order, which finds for each output the first tap whose element equals the
maximum: it runs when Indices are asked for, or when an output is a zero or a NaN, whose exact
bits are then gathered from the element found. The planes (n, c) are cut into blocks of about a
million elements, processed on a thread per core (numpy releases the GIL inside its loops).
"""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from conformance.semantics import DEFAULT, Axis, Readings, to_storage_order

BLOCK_ELEMENTS = 1 << 20  # input elements per block of planes: enough work per numpy call, near cache-sized


def empty_window_value(dtype: np.dtype):
    """What a window with no input element yields."""
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return -np.inf


def max_pool(x: np.ndarray, axes: tuple[Axis, ...], storage_order: int = 0,
             with_indices: bool = True, readings: Readings = DEFAULT) -> tuple[np.ndarray, np.ndarray | None]:
    """Return (Y, Indices) for ``x`` of shape (N, C, *spatial) pooled along ``axes``; Indices is
    None unless ``with_indices``."""
    out_shape = x.shape[:2] + tuple(a.out for a in axes)
    if 0 in out_shape or x.size == 0:
        return np.empty(out_shape, x.dtype), np.empty(out_shape, np.int64) if with_indices else None
    if readings["nan-in-window"] != "nan-propagates" or readings["signed-zero-tie"] != "first-in-window":
        y, row_major = scan_windows(x, axes, readings)
        return y, to_storage_order(row_major, x.shape, storage_order, readings) if with_indices else None
    x = np.ascontiguousarray(x)
    planes: np.ndarray = x.reshape((-1,) + x.shape[2:])
    y = np.empty((planes.shape[0],) + out_shape[2:], x.dtype)
    indices = np.empty(y.shape, np.int64) if with_indices else None
    plane_size = int(np.prod(x.shape[2:]))
    blocks = -(-x.size // BLOCK_ELEMENTS)
    blocks = min(planes.shape[0], -(-blocks // _cores()) * _cores() if blocks > 1 else 1)  # as many for each thread
    per_block = -(-planes.shape[0] // blocks)
    starts = range(0, planes.shape[0], per_block)

    def pool_block(start: int) -> None:
        block = slice(start, start + per_block)
        _pool_block(planes[block], axes, y[block], None if indices is None else indices[block],
                    start * plane_size, with_indices)

    if len(starts) > 1:
        list(_threads().map(pool_block, starts))
    else:
        pool_block(0)
    y = y.reshape(out_shape)
    if indices is None:
        return y, None
    indices = indices.reshape(out_shape)
    return y, to_storage_order(indices, x.shape, storage_order, readings)


@cache
def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@cache
def _threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_cores())


def _pool_block(planes: np.ndarray, axes: tuple[Axis, ...], y: np.ndarray, indices: np.ndarray | None,
                first_index: int, with_indices: bool) -> None:
    """Pool a block of planes (P, *spatial) into ``y`` (P, *out) and, if asked, ``indices``."""
    values = planes
    with np.errstate(invalid="ignore"):  # NaN is data here (bfloat16's maximum warns about it)
        # The first axis first: its taps read whole rows, and the strided reads along the last
        # axis come last, on the least data.
        for dim in range(len(axes)):
            values = _pool_axis(_Taps(values, dim + 1, axes[dim], split=False), y if dim == len(axes) - 1 else None)
        # np.maximum may return -0.0 for +0.0 (or the reverse) and any of a window's NaNs.
        inexact = not np.issubdtype(y.dtype, np.integer)
        has_nan = inexact and bool(np.isnan(y.max()))
        unsure = inexact and (has_nan or not np.all(y))
    if not (with_indices or unsure):
        return
    code = _first_taps(_Taps(planes, len(axes), axes[-1], split=True), axes, y, has_nan)
    flat = _flat_indices(planes.shape, axes, code, first_index, indices)
    if unsure:
        exact = np.isnan(y) | (y == 0)
        y[exact] = planes.reshape(-1)[flat[exact] - first_index]


class _Taps:
    """The elements each kernel tap reads along one axis, for a range of outputs: strided views,
    or, if ``split`` and the axis is the last, views of contiguous copies of the positions of
    each residue modulo the stride (numpy compares several times faster on contiguous data;
    the copies pay off when every tap is read for each output, not for one maximum)."""

    def __init__(self, values: np.ndarray, dim: int, axis: Axis, split: bool):
        self.values, self.dim, self.axis = values, dim, axis
        self.split = split and dim == values.ndim - 1 and axis.stride > 1
        self.residues: dict[int, np.ndarray] = {}

    def outputs(self, lo: int, hi: int) -> tuple[slice, ...]:
        """The index of outputs lo:hi along the axis."""
        return (slice(None),) * self.dim + (slice(lo, hi),)

    def read(self, j: int, lo: int, hi: int) -> np.ndarray:
        """The elements tap j reads for outputs lo:hi."""
        a = self.axis
        first = lo * a.stride - a.pad_begin + j * a.dilation
        if self.split:
            residue = first % a.stride
            if residue not in self.residues:
                self.residues[residue] = np.ascontiguousarray(self.values[..., residue::a.stride])
            start = (first - residue) // a.stride
            return self.residues[residue][..., start:start + hi - lo]
        return self.values[(slice(None),) * self.dim + (slice(first, first + (hi - lo - 1) * a.stride + 1, a.stride),)]

    def spans(self) -> list[tuple[int, int]]:
        return [_tap_span(self.axis, j) for j in range(self.axis.kernel)]


def _pool_axis(taps: _Taps, out: np.ndarray | None) -> np.ndarray:
    """The maximum over the kernel taps along one axis: each tap covers the outputs whose window
    it falls in; outputs no tap reaches (windows wholly in padding) get the empty value."""
    values, axis = taps.values, taps.axis
    shape = values.shape[:taps.dim] + (axis.out,) + values.shape[taps.dim + 1:]
    result = np.empty(shape, values.dtype) if out is None else out
    spans = taps.spans()
    inner_lo, inner_hi = max(lo for lo, _ in spans), min(hi for _, hi in spans)
    if inner_lo < inner_hi:  # outputs every tap reaches: the bulk of the work
        target = result[taps.outputs(inner_lo, inner_hi)]
        if axis.kernel == 1:
            np.copyto(target, taps.read(0, inner_lo, inner_hi))
        else:
            np.maximum(taps.read(0, inner_lo, inner_hi), taps.read(1, inner_lo, inner_hi), out=target)
        for j in range(2, axis.kernel):
            np.maximum(target, taps.read(j, inner_lo, inner_hi), out=target)
    for o in range(axis.out):  # the few outputs at the edges, whose windows reach into padding
        if inner_lo <= o < inner_hi:
            continue
        target = result[taps.outputs(o, o + 1)]
        reaching = [j for j, (lo, hi) in enumerate(spans) if lo <= o < hi]
        if not reaching:
            target.fill(empty_window_value(values.dtype))
            continue
        np.copyto(target, taps.read(reaching[0], o, o + 1))
        for j in reaching[1:]:
            np.maximum(target, taps.read(j, o, o + 1), out=target)
    return result


def _first_taps(last_axis_taps: _Taps, axes: tuple[Axis, ...], y: np.ndarray, nan_aware: bool) -> np.ndarray:
    """For each output, the row-major number of the first tap of its window whose element equals
    the maximum ``y`` (is NaN where ``y`` is); arbitrary where the window is wholly in padding."""
    spans = [[_tap_span(a, j) for j in range(a.kernel)] for a in axes]
    taps = list(itertools.product(*(range(a.kernel) for a in axes)))
    not_found = np.ones(y.shape, bool)
    number = np.zeros(y.shape, np.min_scalar_type(len(taps)))  # taps passed before the first match
    differs = np.empty(y.shape, bool)
    y_nan = np.isnan(y) if nan_aware else None
    for n, tap in enumerate(taps):
        box = [spans[i][j] for i, j in enumerate(tap)]
        if all(lo < hi for lo, hi in box):
            outputs = (slice(None),) + tuple(slice(lo, hi) for lo, hi in box)
            along_last = last_axis_taps.read(tap[-1], *box[-1])  # contiguous along the last axis
            element = along_last[(slice(None),) + tuple(
                slice(lo * a.stride - a.pad_begin + j * a.dilation, (hi - 1) * a.stride - a.pad_begin + j * a.dilation + 1,
                      a.stride) for (lo, hi), a, j in zip(box[:-1], axes[:-1], tap[:-1]))]
            mismatch = np.not_equal(element, y[outputs], out=differs[outputs])
            if y_nan is not None:  # nan_aware
                mismatch &= ~(np.isnan(element) & y_nan[outputs])
            np.logical_and(not_found[outputs], mismatch, out=not_found[outputs])
        if n < len(taps) - 1:
            np.add(number, not_found.view(np.uint8), out=number)
    return number


def _tap_span(axis: Axis, j: int) -> tuple[int, int]:
    """The outputs o whose window's tap j reads an input element: 0 <= o*s - pb + j*d < size."""
    offset = axis.pad_begin - j * axis.dilation
    lo = max(0, -(-offset // axis.stride))
    hi = min(axis.out, (axis.size - 1 + offset) // axis.stride + 1)
    return lo, max(lo, hi)


def _flat_indices(shape: tuple[int, ...], axes: tuple[Axis, ...], code: np.ndarray, first_index: int,
                  out: np.ndarray | None) -> np.ndarray:
    """Flat indices into the whole input from the row-major tap numbers of a block of planes
    (``shape`` = (P, *spatial)); -1 where the window is wholly in padding."""
    strides = np.cumprod((1,) + shape[:0:-1])[::-1]  # element strides of (P, *spatial)
    taps = itertools.product(*(range(a.kernel) for a in axes))
    offset_of_tap = np.array([sum(j * a.dilation * int(s) for j, a, s in zip(tap, axes, strides[1:])) for tap in taps],
                             np.int64)
    flat = np.take(offset_of_tap, code, out=out, mode="clip")  # "clip" skips the bounds check: ten times faster
    flat += first_index + np.arange(shape[0], dtype=np.int64).reshape((-1,) + (1,) * len(axes)) * int(strides[0])
    empty = np.zeros((1,) * code.ndim, bool)
    for i, a in enumerate(axes):
        along = [1] * code.ndim
        along[i + 1] = a.out
        flat += ((np.arange(a.out) * a.stride - a.pad_begin) * int(strides[i + 1])).reshape(along)
        reached = np.zeros(a.out, bool)
        for lo, hi in (_tap_span(a, j) for j in range(a.kernel)):
            reached[lo:hi] = True
        empty = empty | ~reached.reshape(along)
    if empty.any():
        flat[np.broadcast_to(empty, flat.shape)] = -1
    return flat


def without_element(axes: tuple[Axis, ...]) -> np.ndarray:
    """A boolean array of the output's spatial shape: True where the window holds no input element."""
    empty = np.zeros((1,) * len(axes), bool)
    for i, a in enumerate(axes):
        along = [1] * len(axes)
        along[i] = a.out
        empty = empty | np.array([not a.holds_an_element(o) for o in range(a.out)], bool).reshape(along)
    return empty


def scan_windows(x: np.ndarray, axes: tuple[Axis, ...], readings: Readings) -> tuple[np.ndarray, np.ndarray]:
    """(Y, row-major Indices) by a scan over each window's elements in row-major order, keeping the
    element a comparison reading prefers: the path for the other readings of ``nan-in-window``
    and ``signed-zero-tie`` (slower than :func:`max_pool`'s, and it gathers every window)."""
    spatial = x.shape[2:]
    grids = np.meshgrid(*[np.arange(a.out) for a in axes], *[np.arange(a.kernel) for a in axes], indexing="ij")
    rank = len(axes)
    flat: np.ndarray = np.zeros(grids[0].shape, np.int64)
    inside = np.ones(grids[0].shape, bool)
    for i, a in enumerate(axes):
        at = grids[i] * a.stride - a.pad_begin + grids[rank + i] * a.dilation
        inside &= (at >= 0) & (at < a.size)
        flat = flat * spatial[i] + np.clip(at, 0, a.size - 1)
    out_shape: tuple[int, ...] = tuple(a.out for a in axes)
    flat, inside = flat.reshape(out_shape + (-1,)), inside.reshape(out_shape + (-1,))
    planes = x.reshape(x.shape[:2] + (-1,))
    values = planes[..., flat]  # (N, C, *out, taps)
    # Compared exactly: floating types widened to float64 (each is a subset of it), integers as
    # they are (int64 2**62 and 2**62 + 1 are one float64)
    wide = values.astype(np.float64) if values.dtype.kind == "f" or values.dtype.name == "bfloat16" else values
    best = np.zeros(values.shape[:-1], np.int64)
    found = np.zeros(values.shape[:-1], bool)
    nan_reading = readings["nan-in-window"]
    zero_tie = readings["signed-zero-tie"]
    for tap in range(values.shape[-1]):  # each tap of the windows
        v = wide[..., tap]
        kept = np.take_along_axis(wide, best[..., None], -1)[..., 0]
        better = v > kept
        if nan_reading == "nan-propagates":
            better |= np.isnan(v) & ~np.isnan(kept)
        if zero_tie == "positive-zero":
            better |= (v == 0) & (kept == 0) & ~np.signbit(v) & np.signbit(kept)
        elif zero_tie == "last-in-window":
            better |= (v == 0) & (kept == 0)
        # nan-never-selected: NaN counts as padding, so a window of NaN only is one without elements
        counts = inside[..., tap] & ~np.isnan(v) if nan_reading == "nan-never-selected" else inside[..., tap]
        take = counts & (~found | better)
        best = np.where(take, tap, best)
        found |= counts
    y = np.take_along_axis(values, best[..., None], -1)[..., 0]
    y = np.where(found, y, np.array(empty_window_value(x.dtype)).astype(x.dtype))
    plane_size = int(np.prod(spatial, dtype=np.int64))
    position = np.indices(y.shape[:2]).reshape(2, *y.shape[:2], *(1,) * rank)
    within = np.take_along_axis(np.broadcast_to(flat, values.shape), best[..., None], -1)[..., 0]
    indices = (position[0] * x.shape[1] + position[1]) * plane_size + within
    return y.astype(x.dtype), np.where(found, indices, -1)

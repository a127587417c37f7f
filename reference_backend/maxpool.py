"""One N-d max pooling kernel for every MaxPool version.

The kernel finds, for each output position, the flat index of the selected input element and
then gathers the value from the input, so values are bit-identical to an input element. The
choices it makes where the documents are silent are named in ``cases/ambiguities.yaml``:

* ties keep the first maximum in row-major window order;
* NaN propagates: the first NaN in a window is selected (``nan-in-window``);
* a window that covers only padding yields -inf (floats) or the type's lowest value (integers),
  with index -1 (``window-in-padding-only``).
"""

from __future__ import annotations

import itertools

import numpy as np

from .geometry import Axis


def empty_window_value(dtype: np.dtype):
    """What a window with no input element yields."""
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return -np.inf


def max_pool(x: np.ndarray, axes: tuple[Axis, ...], storage_order: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Return (Y, Indices) for ``x`` of shape (N, C, *spatial) pooled along ``axes``."""
    out_shape = x.shape[:2] + tuple(a.out for a in axes)
    if 0 in out_shape:
        return np.empty(out_shape, x.dtype), np.empty(out_shape, np.int64)
    pad_width = [(0, 0), (0, 0)] + [(a.pad_begin, a.pad_end + a.end_overhang) for a in axes]
    # float64 holds every supported element type exactly, so comparisons are exact.
    keys = np.pad(x.astype(np.float64), pad_width, constant_values=-np.inf)
    flat_index = np.pad(np.arange(x.size, dtype=np.int64).reshape(x.shape), pad_width, constant_values=-1)

    best = np.full(out_shape, -np.inf)
    best_is_nan = np.zeros(out_shape, dtype=bool)
    arg = np.full(out_shape, -1, dtype=np.int64)
    for offsets in itertools.product(*(range(a.kernel) for a in axes)):
        window = (slice(None), slice(None)) + tuple(
            slice(j * a.dilation, j * a.dilation + (a.out - 1) * a.stride + 1, a.stride)
            for j, a in zip(offsets, axes)
        )
        value, index = keys[window], flat_index[window]
        value_is_nan = np.isnan(value)
        take = (index >= 0) & ((arg < 0) | (value > best) | (value_is_nan & ~best_is_nan))
        np.copyto(best, value, where=take)
        np.copyto(best_is_nan, value_is_nan, where=take)
        np.copyto(arg, index, where=take)

    found = arg >= 0
    y = x.reshape(-1)[np.where(found, arg, 0)] if x.size else np.empty(out_shape, x.dtype)
    y = np.where(found, y, np.array(empty_window_value(x.dtype)).astype(x.dtype)).astype(x.dtype)
    indices = np.where(found, to_storage_order(arg, x.shape, storage_order), -1)
    return y, indices


def to_storage_order(row_major: np.ndarray, shape: tuple[int, ...], storage_order: int) -> np.ndarray:
    """Re-express row-major flat indices into ``shape``: storage_order 1 makes the spatial part
    column-major, each (n, c) plane keeping its row-major offset (``storage-order-scope``)."""
    if storage_order == 0:
        return row_major
    plane_size = int(np.prod(shape[2:], dtype=np.int64))
    plane, within = np.divmod(np.maximum(row_major, 0), max(plane_size, 1))
    coords = np.unravel_index(within, shape[2:]) if plane_size else ()
    column_major = np.zeros_like(within)
    step = 1
    for axis, extent in enumerate(shape[2:]):
        column_major += coords[axis] * step
        step *= extent
    return plane * plane_size + column_major


def from_storage_order(indices: np.ndarray, shape: tuple[int, ...], storage_order: int) -> np.ndarray:
    """Inverse of :func:`to_storage_order`; entries outside [0, size) are returned unchanged."""
    if storage_order == 0:
        return indices
    plane_size = int(np.prod(shape[2:], dtype=np.int64))
    plane, within = np.divmod(indices, max(plane_size, 1))
    row_major = np.zeros_like(within)
    rest = within
    coords = []
    for extent in shape[2:]:
        rest, coord = np.divmod(rest, extent)
        coords.append(coord)
    for axis, extent in enumerate(shape[2:]):
        row_major = row_major * extent + coords[axis]
    inside = (indices >= 0) & (indices < int(np.prod(shape, dtype=np.int64)))
    return np.where(inside, plane * plane_size + row_major, indices)

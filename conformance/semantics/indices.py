"""What the numbers in MaxPool's Indices mean, for each operator and dialect.

The kernel finds row-major flat positions in the channels-first X, (N, C, spatial...); these
functions re-express them as each operator numbers them:

* ai.onnx ``storage_order`` 1: column-major, by default within each (n, c) plane only
  (``storage-order-scope``);
* ONNX Runtime's NHWC MaxPools: as ai.onnx gives them, channels-first (``nhwc-indices``);
* OpenVINO: counted from ``axis`` on, i.e. modulo the size of the axes from ``axis``.

A negative index (a window with no element) is left as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .readings import DEFAULT, Readings


def _column_major(coords, extents) -> np.ndarray:
    flat: Any
    flat, step = np.zeros_like(coords[0]) if coords else 0, 1
    for coord, extent in zip(coords, extents):
        flat = flat + coord * step
        step *= extent
    return flat


def to_storage_order(row_major: np.ndarray, shape: tuple[int, ...], storage_order: int,
                     readings: Readings = DEFAULT) -> np.ndarray:
    """Row-major flat indices into ``shape`` -> as ``storage_order`` numbers them."""
    if storage_order == 0:
        return row_major
    safe = np.maximum(row_major, 0)
    if readings["storage-order-scope"] == "tensor-column-major":
        total = int(np.prod(shape, dtype=np.int64))
        coords = np.unravel_index(np.minimum(safe, max(total - 1, 0)), shape) if total else [safe] * len(shape)
        return np.where(row_major >= 0, _column_major(list(coords), shape), row_major)
    plane_size = int(np.prod(shape[2:], dtype=np.int64))
    plane, within = np.divmod(safe, max(plane_size, 1))
    coords = np.unravel_index(within, shape[2:]) if plane_size else ()
    column_major = _column_major(list(coords), shape[2:]) if coords else np.zeros_like(within)
    return np.where(row_major >= 0, plane * plane_size + column_major, row_major)


def from_storage_order(indices: np.ndarray, shape: tuple[int, ...], storage_order: int,
                       readings: Readings = DEFAULT) -> np.ndarray:
    """Inverse of :func:`to_storage_order`; entries outside [0, size) are returned unchanged."""
    if storage_order == 0:
        return indices
    total = int(np.prod(shape, dtype=np.int64))
    inside = (indices >= 0) & (indices < total)
    safe = np.where(inside, indices, 0)
    if readings["storage-order-scope"] == "tensor-column-major":
        rest, coords = safe, []
        for extent in shape:
            rest, coord = np.divmod(rest, max(extent, 1))
            coords.append(coord)
        return np.where(inside, np.ravel_multi_index(coords, shape) if total else safe, indices)
    plane_size = int(np.prod(shape[2:], dtype=np.int64))
    plane, within = np.divmod(safe, max(plane_size, 1))
    rest, coords = within, []
    for extent in shape[2:]:
        rest, coord = np.divmod(rest, extent)
        coords.append(coord)
    row_major = np.zeros_like(within)
    for axis, extent in enumerate(shape[2:]):
        row_major = row_major * extent + coords[axis]
    return np.where(inside, plane * plane_size + row_major, indices)


def openvino_reduced(indices: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """OpenVINO's Indices count from ``axis`` on: row-major positions modulo that part's size."""
    bound = max(openvino_bound(shape, axis), 1)
    return np.where(indices >= 0, indices % bound, indices)


def openvino_bound(shape: tuple[int, ...], axis: int) -> int:
    return int(np.prod(shape[axis:], dtype=np.int64))


def nhwc_indices(indices: np.ndarray, shape: tuple[int, ...], readings: Readings = DEFAULT) -> np.ndarray:
    """Indices of an NHWC MaxPool from the channels-first ones (``shape``: the channels-first X)."""
    reading = readings["nhwc-indices"]
    if reading == "channels-first":
        return indices
    moved = np.ascontiguousarray(np.moveaxis(indices, 1, -1))
    if reading == "channels-last-shape":
        return moved
    # channels-last-positions: count positions in the (N, spatial..., C) X
    size = int(np.prod(shape, dtype=np.int64))
    coords = np.unravel_index(np.clip(moved, 0, max(size - 1, 0)), shape) if size else [moved] * len(shape)
    last = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    positions = np.ravel_multi_index((coords[0],) + tuple(coords[2:]) + (coords[1],), last) if size else moved
    return np.where(moved >= 0, positions, moved)

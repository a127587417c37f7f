"""Defect models of one kernel's path: OpenCV DNN 5.0.0's MaxPool with Indices (a vendor trial,
maxpool_layer.cpp's maxPoolNchwWithIndices), whose two bugs, the batch offset left out of its
Indices and a window with nothing above its seed, are one family of code. The search tries them
last."""

from __future__ import annotations

import numpy as np

from .kit import DefectModel, finfo_of, plane_origins, pooled, with_results


def _nothing_selected_gives_zero(x, axes, storage_order, pool):
    """A running maximum that starts at the type's lowest finite value and moves only on a greater
    value (NaN never is), and answers 0 at its plane's first element where it never moved: a window
    of NaN, -inf and the lowest value only gives 0."""
    integer = np.issubdtype(x.dtype, np.integer)
    lowest = np.array(np.iinfo(x.dtype).min if integer else finfo_of(x.dtype).min, x.dtype)
    with np.errstate(invalid="ignore"):
        y, indices = pool(np.where(x > lowest, x, lowest), axes, storage_order)
        unmoved = y.astype(np.float64) <= float(lowest)
    if not unmoved.any():
        return y, indices
    y = np.where(unmoved, np.zeros((), y.dtype), y)
    if indices is not None and y.ndim >= 2:
        indices = np.where(unmoved, np.broadcast_to(plane_origins(y, int(np.prod(x.shape[2:]))), y.shape), indices)
    return y, indices


def _indices_per_batch_element(y, indices, x, axes):
    """Indices within their batch element: N's offset left out, C's kept."""
    if indices.ndim < 2:
        return y, indices
    element = int(np.prod(x.shape[1:]))
    origin = np.arange(indices.shape[0]).reshape((-1,) + (1,) * (indices.ndim - 1)) * element
    return y, np.where(indices >= 0, indices - origin, indices)


MODELS: list[DefectModel] = [
    DefectModel("indices_per_batch_element", "Indices omit the batch offset (they count within each batch element, "
                "its channels included)", "OpenCV DNN 5.0.0, a vendor trial (maxpool_layer.cpp, maxPoolNchwWithIndices: "
                "idx = (c * H + y) * W + x, with n never used)",
                with_results(_indices_per_batch_element), lambda f: f.pools and f.wants_indices, touches="Indices"),
    DefectModel("nothing_selected_gives_zero", "a window with nothing above the lowest finite value (-inf, NaN, the "
                "lowest itself) gives 0 at its plane's first element", "OpenCV DNN 5.0.0, a vendor trial "
                "(maxPoolNchwWithIndices: vmax starts at lowest(), moves on v > vmax, and idxmax < 0 writes 0)",
                pooled(_nothing_selected_gives_zero), lambda f: f.pools and f.wants_indices),
]

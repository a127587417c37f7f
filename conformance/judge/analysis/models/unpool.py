"""Defect models of MaxUnpool: its output shape, the planes its Indices count within, its pads and fill."""

from __future__ import annotations

from typing import Callable

import numpy as np

from reference_backend import ReferenceBackend

from .kit import DefectModel, SEEN_FUZZ, base, variant, with_attributes, with_results


def unpooled(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the unpooling: change(x, indices, shape, default_shape, unpool), ``unpool`` the reference's."""
    return variant(unpool=lambda cls, x, indices, shape, default_shape=None: change(
        x, indices, shape, default_shape, base(cls, "unpool")))


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


MODELS: list[DefectModel] = [
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
]

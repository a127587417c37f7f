"""Defect models of the Indices output: the planes and batches it counts within, its layout and
storage_order, its element type."""

from __future__ import annotations

from typing import Callable

import numpy as np


from .kit import DefectModel, SEEN_FUZZ, has_pads, plane_origins, pooled, with_results


def _indices_per_plane(y, indices, x, axes):
    """Indices within their (n, c) plane (one past its plane's last element stays so)."""
    plane = max(int(np.prod(x.shape[2:])), 1)
    within = np.where(indices >= 0, indices % plane, indices)
    if indices.shape == y.shape:
        within = np.where(indices - plane_origins(y, plane) == plane, plane, within)
    return y, within


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


MODELS: list[DefectModel] = [
    DefectModel("indices_per_plane", "Indices omit the N·C plane offset (they count within each plane, as PyTorch's do)",
                "tinygrad 0.14 (expectations/tinygrad.yaml: Tensor.max_pool2d(return_indices=True))",
                with_results(_indices_per_plane),
                lambda f: f.pools and f.wants_indices, touches="Indices"),
    DefectModel("indices_in_padded_layout", "Indices count positions of the padded tensor", SEEN_FUZZ,
                with_results(_index_in_padded_layout), lambda f: f.pools and f.wants_indices and has_pads(f), touches="Indices"),
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
]

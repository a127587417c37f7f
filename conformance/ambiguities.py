"""Which open questions of the documents an item runs into.

A documented example names its ambiguity itself, with every reading's output written out. A
generated case does not have to: for each entry of ``cases/ambiguities.yaml`` that a generator
can stumble into, a detector below recognises the situation from the item's attributes, shapes
and input values. Items with an open ambiguity are ``divergent`` on every backend, so a case
class may range freely without ever failing a backend on a question the documents leave open.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from reference_backend.geometry import GeometryError, openvino_axes, pool_axes, unpool_shape

from .expand import Item

Inputs = dict[str, np.ndarray]
OPENVINO_DOMAIN = "org.openvinotoolkit"
DETECTORS: dict[str, Callable[[Item, Inputs], bool]] = {}


def detected(item: Item, inputs: Inputs) -> list[str]:
    """The ambiguities of ``item``: its case's own tag, then those the detectors find."""
    found = [item.case.ambiguity.id] if item.case.ambiguity else []
    if item.case.reject:
        return found
    for key, detector in DETECTORS.items():
        if key not in found and detector(item, inputs):
            found.append(key)
    return found


def detector(key: str):
    def register(function: Callable[[Item, Inputs], bool]):
        DETECTORS[key] = function
        return function
    return register


def _pooling(item: Item) -> tuple[dict, tuple[int, ...]] | None:
    """The ONNX-style MaxPool node's attributes and input shape (the upstream node of a round
    trip); None for other operators, OpenVINO's included (see _openvino_axes)."""
    case = item.case
    if case.domain == OPENVINO_DOMAIN:
        return None
    if case.op in ("MaxPool", "NhwcMaxPool"):
        return case.attributes, item.inputs[0].spec.shape
    if case.upstream and case.upstream.op == "MaxPool":
        return case.upstream.attributes, item.inputs[0].spec.shape
    return None


def _axes(attributes: dict, shape: tuple[int, ...], **override):
    merged = {**attributes, **override}
    try:
        return pool_axes(shape[2:], merged["kernel_shape"], merged.get("strides"), merged.get("pads"),
                         merged.get("dilations"), merged.get("auto_pad", "NOTSET"), merged.get("ceil_mode", 0))
    except GeometryError:
        return None


def _ceil_rounding_changes_the_size(item: Item, explicit_pads: bool) -> bool:
    """ceil_mode is set and rounding the printed formula up gives another size than the one the
    reference computes (the drop rule for explicit pads, the auto_pad formula otherwise)."""
    pooling = _pooling(item)
    if not pooling or not pooling[0].get("ceil_mode"):
        return False
    if (pooling[0].get("auto_pad", "NOTSET") == "NOTSET") != explicit_pads:
        return False
    axes = _axes(*pooling)
    return bool(axes) and any(
        -(-(a.size + a.pad_begin + a.pad_end - a.extent) // a.stride) + 1 != a.out for a in axes
    )


@detector("ceil-window-starts-in-padding")
def _ceil_drops_a_window(item: Item, inputs: Inputs) -> bool:
    return _ceil_rounding_changes_the_size(item, explicit_pads=True)


@detector("auto-pad-with-ceil-mode")
def _auto_pad_size_depends_on_ceil(item: Item, inputs: Inputs) -> bool:
    return _ceil_rounding_changes_the_size(item, explicit_pads=False)


@detector("same-pad-negative")
def _same_total_is_negative(item: Item, inputs: Inputs) -> bool:
    pooling = _pooling(item)
    if not pooling or not pooling[0].get("auto_pad", "NOTSET").startswith("SAME"):
        return False
    axes = _axes(*pooling)
    return bool(axes) and any((a.out - 1) * a.stride + a.extent < a.size for a in axes)


@detector("window-in-padding-only")
def _a_window_holds_no_element(item: Item, inputs: Inputs) -> bool:
    pooling = _pooling(item)
    axes = _axes(*pooling) if pooling else None
    return bool(axes) and any(
        not any(0 <= p < a.size for p in a.positions(o)) for a in axes for o in range(a.out)
    )


def _openvino_axes(item: Item):
    if item.case.domain != OPENVINO_DOMAIN or item.case.reject:
        return None
    a = item.case.attributes
    try:
        return openvino_axes(item.inputs[0].spec.shape[2:], a["kernel"], a["strides"], a["pads_begin"], a["pads_end"],
                             a.get("dilations"), a.get("auto_pad", "explicit"), a.get("rounding_type", "floor"))
    except GeometryError:
        return None


@detector("openvino-window-without-element")
def _an_openvino_window_holds_no_element(item: Item, inputs: Inputs) -> bool:
    axes = _openvino_axes(item)
    return bool(axes) and any(
        not any(0 <= p < a.size for p in a.positions(o)) for a in axes for o in range(a.out)
    )


@detector("openvino-same-output-size")
def _openvino_same_with_a_stride(item: Item, inputs: Inputs) -> bool:
    a = item.case.attributes
    return item.case.domain == OPENVINO_DOMAIN and not item.case.reject \
        and a.get("auto_pad", "explicit").startswith("same") and any(s > 1 for s in a.get("strides", ()))


@detector("storage-order-scope")
def _column_major_over_several_planes(item: Item, inputs: Inputs) -> bool:
    pooling = _pooling(item)
    wants_indices = any(o.positions_of for o in item.outputs) or item.case.upstream is not None
    return bool(pooling) and wants_indices and pooling[0].get("storage_order", 0) == 1 \
        and int(np.prod(pooling[1][:2])) > 1


@detector("nan-in-window")
def _nan_in_input(item: Item, inputs: Inputs) -> bool:
    x = inputs[item.inputs[0].name]
    return not item.inputs[0].dtype.is_integer and bool(np.isnan(x.astype(np.float64)).any())


@detector("signed-zero-tie")
def _both_zeros_in_input(item: Item, inputs: Inputs) -> bool:
    x = inputs[item.inputs[0].name].astype(np.float64)
    zeros = x[x == 0]
    return bool(np.signbit(zeros).any() and (~np.signbit(zeros)).any())


@detector("pads-with-auto-pad")
def _pads_and_auto_pad(item: Item, inputs: Inputs) -> bool:
    pooling = _pooling(item)
    return bool(pooling) and "pads" in pooling[0] and pooling[0].get("auto_pad", "NOTSET") != "NOTSET"


def _unpool_shapes(item: Item, inputs: Inputs):
    """(default shape, requested shape, indices or None) of a MaxUnpool item with output_shape."""
    if item.case.op != "MaxUnpool" or "output_shape" not in inputs:
        return None
    attrs = item.case.attributes
    if item.case.upstream:
        pooled = _axes(*_pooling(item))
        pooled_shape = item.inputs[0].spec.shape[:2] + tuple(a.out for a in pooled)
        indices = None
    else:
        pooled_shape, indices = inputs["X"].shape, inputs["I"]
    try:
        default = unpool_shape(pooled_shape, attrs["kernel_shape"], attrs.get("strides"), attrs.get("pads"))
    except GeometryError:
        return None
    return default, tuple(int(d) for d in inputs["output_shape"]), indices


@detector("maxunpool-output-shape-index-space")
def _readings_place_indices_differently(item: Item, inputs: Inputs) -> bool:
    shapes = _unpool_shapes(item, inputs)
    if not shapes:
        return False
    default, requested, indices = shapes
    differing = [axis for axis, (d, r) in enumerate(zip(default, requested)) if d != r]
    if not differing:
        return False
    first = differing[0]
    # A flat index has the same coordinates in both shapes only when every axis before the first
    # differing one has size 1 and every axis after it is unchanged (row-major strides then agree).
    same_coordinates = all(d == 1 for d in default[:first]) and default[first + 1:] == requested[first + 1:]
    in_both = indices is not None and (not indices.size or int(indices.max()) < min(np.prod(default), np.prod(requested)))
    return not (same_coordinates and in_both)


@detector("maxunpool-output-shape-smaller")
def _requested_shape_is_smaller(item: Item, inputs: Inputs) -> bool:
    shapes = _unpool_shapes(item, inputs)
    return bool(shapes) and int(np.prod(shapes[1])) < int(np.prod(shapes[0]))


@detector("maxunpool-output-shape-batch-channels")
def _requested_shape_changes_batch_or_channels(item: Item, inputs: Inputs) -> bool:
    shapes = _unpool_shapes(item, inputs)
    return bool(shapes) and shapes[0][:2] != shapes[1][:2]


@detector("maxunpool-duplicate-indices")
def _indices_repeat(item: Item, inputs: Inputs) -> bool:
    if item.case.op != "MaxUnpool":
        return False
    if item.case.upstream:  # overlapping pooling windows can select one element twice
        axes = _axes(*_pooling(item))
        return bool(axes) and any(a.stride < a.extent for a in axes)
    indices = inputs["I"].reshape(-1)
    return np.unique(indices).size != indices.size

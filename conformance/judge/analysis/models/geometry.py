"""Defect models of a window's geometry: output sizes, pads, strides, kernels, dilations and the
loops over a window's positions."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from reference_backend import ReferenceBackend

from ....semantics import OPENVINO_DOMAIN, Axis
from .kit import DefectModel, Facts, SEEN_FUZZ, has_pads, base, variant, with_attributes, with_results


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


SAME_SWAPPED = {"SAME_UPPER": "SAME_LOWER", "SAME_LOWER": "SAME_UPPER"}


def _same_swapped(attrs: dict) -> dict:
    auto_pad = attrs.get("auto_pad")
    return with_attributes(attrs, auto_pad=SAME_SWAPPED.get(auto_pad, auto_pad) if isinstance(auto_pad, str) else auto_pad)


def _interleave_pads(pads):
    if not pads:
        return pads
    return list(pads[0::2]) + list(pads[1::2])


def asymmetric_pads(facts: Facts) -> bool:
    pads = facts.attributes.get("pads") or []
    return len(pads) % 2 == 0 and pads[:len(pads) // 2] != pads[len(pads) // 2:]


MODELS: list[DefectModel] = [
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
                geometry(_begin_pads_on_both_sides), lambda f: f.onnx_pool and asymmetric_pads(f)),
    DefectModel("window_loop_stops_at_begin_padding",
                "a window's loop stops at its first position outside the input instead of skipping it: a window "
                "that starts in the begin padding reads nothing (the seed, index 0)",
                "MNN 3.6.1, a vendor trial (poolingMaxWithRedice's loops: for (kh = 0; kh < kH && ih + kh >= 0 ...))",
                with_results(_loop_stops_at_begin_padding), lambda f: f.pools and has_pads(f)),
]

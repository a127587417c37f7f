"""Defect models of the other domains' layouts and attributes: com.ms.internal.nhwc's channels-last
layout and activation, OpenVINO's ceil rule, axis, index type and dilations."""

from __future__ import annotations

import dataclasses
from typing import Callable


from reference_backend import ReferenceBackend

from ....semantics import OPENVINO_DOMAIN
from .kit import DefectModel, SEEN_FUZZ, base, variant


NHWC_DOMAINS = ("com.ms.internal.nhwc", "com.microsoft")


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


MODELS: list[DefectModel] = [
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
]

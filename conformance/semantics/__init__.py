"""The meaning of the max-pooling operators, owned by the suite: window geometry and the meaning of
indices for ai.onnx MaxPool and MaxUnpool, ONNX Runtime's NHWC domains and OpenVINO's MaxPool-1,
-8 and -14, parameterised by the readings of the documents' open questions (``cases/ambiguities.yaml``).

The reference backend computes with the default readings and takes its geometry from here; the
judge uses this package, never the reference backend's internals.
"""

from .geometry import (AUTO_PADS, OPENVINO_AUTO_PADS, OPENVINO_DOMAIN, Axis, GeometryError, has_empty_window,
                       node_axes, openvino_axes, openvino_rounding_types, pool_axes, unpool_shape)
from .indices import from_storage_order, nhwc_indices, openvino_bound, openvino_reduced, to_storage_order
from .readings import DEFAULT, QUESTIONS, REJECTED, Readings, UnknownReading, alternatives

__all__ = [
    "AUTO_PADS", "OPENVINO_AUTO_PADS", "OPENVINO_DOMAIN", "Axis", "GeometryError", "has_empty_window", "node_axes",
    "openvino_axes", "openvino_rounding_types", "pool_axes", "unpool_shape", "from_storage_order", "nhwc_indices", "openvino_bound",
    "openvino_reduced", "to_storage_order", "DEFAULT", "QUESTIONS", "REJECTED", "Readings", "UnknownReading",
    "alternatives",
]

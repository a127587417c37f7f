"""What each operator version accepts, as the reference backend enforces it.

Transcribed from the documents independently of the suite's ``conformance/load/operators.yaml``;
tests/test_operators.py checks both against ``onnx.defs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import ml_dtypes
import numpy as np
from onnx import AttributeProto as A
from onnx import TensorProto as T

# numpy has no bfloat16; ml_dtypes provides it (onnx maps it only from 1.19 on).
ELEMENT_TYPES = {
    np.dtype(np.float16): T.FLOAT16, np.dtype(np.float32): T.FLOAT, np.dtype(np.float64): T.DOUBLE,
    np.dtype(ml_dtypes.bfloat16): T.BFLOAT16, np.dtype(np.int8): T.INT8, np.dtype(np.uint8): T.UINT8,
    np.dtype(np.int32): T.INT32, np.dtype(np.int64): T.INT64,
}
FLOATS = (T.FLOAT16, T.FLOAT, T.DOUBLE)
EIGHT_BIT = (T.INT8, T.UINT8)


@dataclass(frozen=True)
class Signature:
    attributes: Mapping[str, int]  # name -> AttributeProto type
    types: tuple[int, ...]  # element types of the first input (and of the first output)
    inputs: tuple[int, int]  # (min, max) count
    outputs: tuple[int, int]


_POOL_1 = {"auto_pad": A.STRING, "kernel_shape": A.INTS, "pads": A.INTS, "strides": A.INTS}
_POOL_8 = {**_POOL_1, "storage_order": A.INT}
_POOL_10 = {**_POOL_8, "ceil_mode": A.INT, "dilations": A.INTS}
_UNPOOL = {"kernel_shape": A.INTS, "pads": A.INTS, "strides": A.INTS}

_ONNX_MAX_POOL = {
    1: Signature(_POOL_1, FLOATS, (1, 1), (1, 1)),
    8: Signature(_POOL_8, FLOATS, (1, 1), (1, 2)),
    10: Signature(_POOL_10, FLOATS, (1, 1), (1, 2)),
    11: Signature(_POOL_10, FLOATS, (1, 1), (1, 2)),
    12: Signature(_POOL_10, FLOATS + EIGHT_BIT, (1, 1), (1, 2)),
    22: Signature(_POOL_10, FLOATS + EIGHT_BIT + (T.BFLOAT16,), (1, 1), (1, 2)),
}
# ONNX Runtime's internal NHWC MaxPool: ai.onnx's up to 12, plus the activation its XNNPACK
# execution provider fuses in.
_ACTIVATION = {"activation": A.STRING, "activation_params": A.FLOATS}

SIGNATURES: dict[tuple[str, str], dict[int, Signature]] = {
    ("ai.onnx", "MaxPool"): _ONNX_MAX_POOL,
    ("ai.onnx", "MaxUnpool"): {
        9: Signature(_UNPOOL, FLOATS, (2, 3), (1, 1)),
        11: Signature(_UNPOOL, FLOATS, (2, 3), (1, 1)),
        22: Signature(_UNPOOL, FLOATS + (T.BFLOAT16,), (2, 3), (1, 1)),
    },
    ("com.ms.internal.nhwc", "MaxPool"): {
        version: Signature({**s.attributes, **_ACTIVATION}, s.types, s.inputs, s.outputs)
        for version, s in _ONNX_MAX_POOL.items() if version <= 12
    },
    ("com.microsoft", "NhwcMaxPool"): {
        1: Signature({**_POOL_1, "ceil_mode": A.INT, "dilations": A.INTS}, EIGHT_BIT, (1, 1), (1, 1)),
    },
}
# OpenVINO's MaxPool-1 and -8 under its own domain, with its attribute names.
_OPENVINO_1 = {"auto_pad": A.STRING, "kernel": A.INTS, "pads_begin": A.INTS, "pads_end": A.INTS,
               "rounding_type": A.STRING, "strides": A.INTS}
_OPENVINO_TYPES = FLOATS + (T.BFLOAT16,) + EIGHT_BIT + (T.INT32, T.INT64)
SIGNATURES["org.openvinotoolkit", "MaxPool"] = {
    1: Signature(_OPENVINO_1, _OPENVINO_TYPES, (1, 1), (1, 1)),
    8: Signature({**_OPENVINO_1, "axis": A.INT, "dilations": A.INTS, "index_element_type": A.STRING},
                 _OPENVINO_TYPES, (1, 1), (1, 2)),
    14: Signature({**_OPENVINO_1, "axis": A.INT, "dilations": A.INTS, "index_element_type": A.STRING},
                  _OPENVINO_TYPES, (1, 1), (1, 2)),
}
OPENVINO = ("org.openvinotoolkit", "MaxPool")

# Operators whose tensors are (N, spatial..., C); Indices stay as ai.onnx gives them.
CHANNELS_LAST = {("com.ms.internal.nhwc", "MaxPool"), ("com.microsoft", "NhwcMaxPool")}


def resolve(domain: str, op: str, opset: int) -> int | None:
    """The version of ``op`` that an opset import of ``opset`` for ``domain`` selects, if any."""
    versions = [v for v in SIGNATURES[domain, op] if v <= opset]
    return max(versions) if versions else None

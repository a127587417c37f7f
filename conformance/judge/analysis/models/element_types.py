"""Defect models of element types: a type pooled through, or compared as, another."""

from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np

from reference_backend import ReferenceBackend

from .kit import DefectModel, SEEN_FUZZ, of_type, pooled, through


def widened(dtype: Any, only: Any) -> type[ReferenceBackend]:
    """X of element type ``only`` pooled in the wider ``dtype`` and returned in it: beside another
    bug, that bug's seed or padding is ``dtype``'s (OpenCV: float16 pooled in float32 from -FLT_MAX)."""
    def widened_pool(x, axes, storage_order, pool):
        return pool(x.astype(dtype) if x.dtype == only else x, axes, storage_order)
    model = pooled(widened_pool)
    model.retypes = True  # type: ignore[attr-defined]
    return model


def _bytes_compared_as(view: Any, only: Any) -> Callable:
    """X of one-byte type ``only`` compared as the other signedness (``view``), its bits kept."""
    def pool_viewed(x, axes, storage_order, pool):
        if x.dtype != only:
            return pool(x, axes, storage_order)
        y, indices = pool(x.view(view), axes, storage_order)
        return y.view(only), indices
    return pool_viewed


MODELS: list[DefectModel] = [
    DefectModel("float16_computed_as_float32", "float16 inputs give float32 outputs", SEEN_FUZZ,
                widened(np.float32, np.float16), of_type(np.float16), touches="Y"),
    DefectModel("int8_compared_unsigned", "int8 values are compared as unsigned bytes",
                "a vendor trial of a runtime new to us (issue 38: unsigned compared as signed)",
                pooled(_bytes_compared_as(np.uint8, np.int8)), of_type(np.int8)),
    DefectModel("uint8_compared_signed", "uint8 values are compared as signed bytes: 128 and above lose to smaller values",
                "MNN 3.6.1, a vendor trial (its one-byte kernel, CPUPoolInt8, compares int8)",
                pooled(_bytes_compared_as(np.int8, np.uint8)), of_type(np.uint8)),
    DefectModel("bfloat16_through_float16", "bfloat16 is pooled through float16, losing its range", SEEN_FUZZ,
                through(np.float16, ml_dtypes.bfloat16), of_type(ml_dtypes.bfloat16)),
    DefectModel("float64_through_float32", "float64 is pooled through float32", "OpenVINO's CPU plugin (expectations/openvino.yaml)",
                through(np.float32, np.float64), of_type(np.float64)),
    DefectModel("float64_through_float32_saturated",
                "float64 is pooled through float32 by a saturating conversion: infinities become -+3.4028235e+38",
                "OpenVINO's CPU plugin (expectations/openvino.yaml: infinities become +-FLT_MAX)",
                through(np.float32, np.float64, saturating=True), of_type(np.float64)),
    DefectModel("int32_through_float32", "int32 is pooled through float32: values beyond 2^24 are rounded",
                "OpenVINO's CPU plugin (expectations/openvino.yaml, wide_integers)", through(np.float32, np.int32),
                # int64 too: beneath a runtime that pools int64 as int32 (OpenVINO's) it is what pools
                lambda f: f.pools and f.dtype in (np.int32, np.int64)),
    DefectModel("int64_through_int32", "int64 is pooled as int32: values beyond 2^31 wrap",
                "OpenVINO's CPU plugin (https://github.com/openvinotoolkit/openvino/issues/35823)",
                through(np.int32, np.int64), of_type(np.int64)),
]

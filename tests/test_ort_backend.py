"""The ONNX Runtime adapter: NOT_IMPLEMENTED becomes `unsupported`, other refusals stay errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import Unsupported, load_backend
from tests.test_reference_vs_naive import single_node_model

pytest.importorskip("onnxruntime")


def test_a_registered_kernel_runs():
    backend = load_backend("ort")
    model = single_node_model("MaxPool", 12, [("X", TensorProto.UINT8)], [("Y", TensorProto.UINT8)], kernel_shape=[2])
    (y,) = backend.run(model, {"X": np.array([[[1, 3, 2]]], np.uint8)})
    assert y.tolist() == [[[3, 3]]]
    assert backend.details()["providers"] == "CPUExecutionProvider"


def test_a_missing_kernel_is_unsupported_with_ort_s_own_message():
    backend = load_backend("ort")
    model = single_node_model("MaxUnpool", 11, [("X", TensorProto.DOUBLE), ("I", TensorProto.INT64)],
                              [("Y", TensorProto.DOUBLE)], kernel_shape=[2])
    with pytest.raises(Unsupported, match="Could not find an implementation for MaxUnpool"):
        backend.run(model, {"X": np.ones((1, 1, 1)), "I": np.zeros((1, 1, 1), np.int64)})


def test_bfloat16_max_pool_is_unsupported_rather_than_an_error():
    backend = load_backend("ort")
    model = single_node_model("MaxPool", 22, [("X", TensorProto.BFLOAT16)], [("Y", TensorProto.BFLOAT16)], kernel_shape=[2])
    with pytest.raises(Unsupported):
        backend.run(model, {"X": np.ones((1, 1, 2), ml_dtypes.bfloat16)})


def test_an_invalid_model_is_refused_with_an_ordinary_exception():
    backend = load_backend("ort")
    model = single_node_model("MaxPool", 8, [("X", TensorProto.INT8)], [("Y", TensorProto.INT8)], kernel_shape=[2])
    with pytest.raises(Exception, match="INVALID_GRAPH") as info:
        backend.run(model, {"X": np.ones((1, 1, 2), np.int8)})
    assert not isinstance(info.value, Unsupported)

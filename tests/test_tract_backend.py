"""The tract adapter: a missing operator or element type is `unsupported`, other refusals errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import Unsupported, load_backend
from tests.test_reference_vs_naive import single_node_model

pytest.importorskip("tract")


def test_a_max_pool_runs_from_the_model_file():
    backend = load_backend("tract")
    model = single_node_model("MaxPool", 12, [("X", TensorProto.UINT8)], [("Y", TensorProto.UINT8)], kernel_shape=[2])
    (y,) = backend.run(model, {"X": np.array([[[1, 3, 2]]], np.uint8)})
    assert y.tolist() == [[[3, 3]]] and y.dtype == np.uint8


def test_max_unpool_is_unsupported_with_tract_s_own_message():
    backend = load_backend("tract")
    model = single_node_model("MaxUnpool", 11, [("X", TensorProto.FLOAT), ("I", TensorProto.INT64)],
                              [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    with pytest.raises(Unsupported, match=r"Unimplemented\(MaxUnpool\)"):
        backend.run(model, {"X": np.ones((1, 1, 1), np.float32), "I": np.zeros((1, 1, 1), np.int64)})


def test_bfloat16_is_unsupported():
    backend = load_backend("tract")
    model = single_node_model("MaxPool", 22, [("X", TensorProto.BFLOAT16)], [("Y", TensorProto.BFLOAT16)], kernel_shape=[2])
    with pytest.raises(Unsupported, match="Bfloat16"):
        backend.run(model, {"X": np.ones((1, 1, 2), ml_dtypes.bfloat16)})

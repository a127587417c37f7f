"""The OpenVINO adapter: its own MaxPool built natively, ai.onnx through the ONNX frontend,
bfloat16 read as bfloat16, and "cannot" kept apart from "refuses"."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import Unsupported, load_backend
from tests.test_reference_vs_naive import single_node_model

pytest.importorskip("openvino")
OPENVINO = "org.openvinotoolkit"


def test_openvino_s_own_max_pool_is_built_natively_with_its_attributes():
    backend = load_backend("openvino")
    model = single_node_model("MaxPool", 8, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT), ("I", TensorProto.INT32)],
                              domain=OPENVINO, kernel=[2], strides=[2], pads_begin=[0], pads_end=[0],
                              rounding_type="ceil", index_element_type="i32", axis=2)
    y, indices = backend.run(model, {"X": np.array([[[1, 3, 2]], [[4, 0, 5]]], np.float32)})
    assert y.tolist() == [[[3, 2]], [[4, 5]]]
    assert indices.dtype == np.int32 and indices.tolist() == [[[1, 2]], [[0, 2]]]  # axis 2: within each row


def test_an_attribute_its_version_lacks_is_refused():
    backend = load_backend("openvino")
    model = single_node_model("MaxPool", 1, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], domain=OPENVINO,
                              kernel=[2], strides=[1], pads_begin=[0], pads_end=[0], dilations=[1])
    with pytest.raises(ValueError, match="MaxPool-1 has no attribute dilations"):
        backend.run(model, {"X": np.ones((1, 1, 3), np.float32)})


def test_ai_onnx_goes_through_the_frontend_and_bfloat16_comes_back_as_bfloat16():
    backend = load_backend("openvino")
    model = single_node_model("MaxPool", 22, [("X", TensorProto.BFLOAT16)], [("Y", TensorProto.BFLOAT16)], kernel_shape=[2])
    x = np.array([[[1.5, -3.25, 7.0]]], ml_dtypes.bfloat16)
    (y,) = backend.run(model, {"X": x})
    assert y.dtype == ml_dtypes.bfloat16 and y.astype(np.float32).tolist() == [[[1.5, 7.0]]]


def test_an_operator_the_frontend_cannot_convert_is_unsupported_with_its_message():
    backend = load_backend("openvino")
    model = single_node_model("MaxUnpool", 11, [("X", TensorProto.FLOAT), ("I", TensorProto.INT64)],
                              [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    with pytest.raises(Unsupported, match="No conversion rule found for operations: MaxUnpool"):
        backend.run(model, {"X": np.ones((1, 1, 1), np.float32), "I": np.zeros((1, 1, 1), np.int64)})


def test_a_refusal_leads_with_openvino_s_reason_not_its_source_location():
    backend = load_backend("openvino")
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    with pytest.raises(RuntimeError) as info:
        backend.run(model, {"X": np.ones((0, 1, 3), np.float32)})
    assert str(info.value).splitlines()[0] == "Batch size is zero."


def test_an_opset_the_package_left_unimported_is_found_as_its_submodule(monkeypatch):
    """OpenVINO 2023.1 to 2024.6: the package has Core but not its opsets as attributes, and 2023.0
    keeps them under openvino.runtime: the native MaxPool is built all the same (a release that
    seemed to lack opset1/opset8 made 102 native items a release unsupported in the sweep)."""
    import sys
    import types

    from conformance.backends.openvino import opset_of

    bare = types.ModuleType("bare_openvino")  # a top-level package without opset attributes
    opset8 = types.ModuleType("openvino.runtime.opset8")
    monkeypatch.setitem(sys.modules, "openvino.runtime.opset8", opset8)
    monkeypatch.setitem(sys.modules, "openvino.opset8", None)  # absent at the top: import raises ImportError
    assert opset_of(bare, "opset8") is opset8
    assert opset_of(bare, "opset99") is None
    with_attribute = types.SimpleNamespace(__name__="x", opset1="the package's own")
    assert opset_of(with_attribute, "opset1") == "the package's own"

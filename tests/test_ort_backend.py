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


def test_the_internal_nhwc_max_pool_is_unsupported_on_a_cpu_build_with_ort_s_message():
    backend = load_backend("ort")
    model = single_node_model("MaxPool", 11, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)],
                              domain="com.ms.internal.nhwc", kernel_shape=[2])
    with pytest.raises(Unsupported, match=r"NOT_IMPLEMENTED.*MaxPool\(11\)"):
        backend.run(model, {"X": np.ones((1, 3, 2), np.float32)})


def test_nhwc_max_pool_runs_on_the_cpu_build():
    backend = load_backend("ort")
    model = single_node_model("NhwcMaxPool", 1, [("X", TensorProto.UINT8)], [("Y", TensorProto.UINT8)],
                              domain="com.microsoft", kernel_shape=[2])
    x = np.array([[[1, 10], [3, 20], [2, 30]]], np.uint8)  # N=1, length 3, C=2
    (y,) = backend.run(model, {"X": x})
    assert y.tolist() == [[[3, 20], [3, 30]]]


def test_provider_options_go_to_their_provider_and_show_in_the_details():
    backend = load_backend("ort[CPUExecutionProvider.arena_extend_strategy=kSameAsRequested]")
    assert backend.details()["CPUExecutionProvider.arena_extend_strategy"] == "kSameAsRequested"
    assert backend.name == "ort[CPUExecutionProvider.arena_extend_strategy=kSameAsRequested]"
    with pytest.raises(Exception, match="options are providers, optimization, threads"):
        load_backend("ort[CUDAExecutionProvider.prefer_nhwc=1]")


# Refusals as execution providers word them, outside NOT_IMPLEMENTED: (exception class, message).
EP_REFUSALS = [
    ("RuntimeException", "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Exception during initialization: "
     "[OpenVINO-EP]  Exception while Reading network: Exception from src/frontends/onnx/frontend/src/core/"
     "graph.cpp:238:\nOpenVINO does not support the following ONNX operations: com.ms.internal.nhwc.MaxPool\n"),
    ("EPFail", "[ONNXRuntimeError] : 11 : EP_FAIL : [OpenVINO-EP] No conversion rule found for operations: "
     "com.microsoft.NhwcMaxPool"),
    ("Fail", "[ONNXRuntimeError] : 1 : FAIL : This session contains graph nodes that are assigned to the default "
     "CPU EP, but fallback to CPU EP has been explicitly disabled by the user."),
    ("Fail", "[ONNXRuntimeError] : 1 : FAIL : Fatal error: org.openvinotoolkit:MaxPool(-1) is not a registered "
     "function/op"),
]


def _backend_raising(monkeypatch, kind: str, message: str):
    backend = load_backend("ort")
    error = getattr(backend.ort.capi.onnxruntime_pybind11_state, kind)

    def refuse(*args, **kwargs):
        raise error(message)
    monkeypatch.setattr(backend.ort, "InferenceSession", refuse)
    return backend


@pytest.mark.parametrize("kind, message", EP_REFUSALS, ids=[m[30:70] for _, m in EP_REFUSALS])
def test_every_execution_provider_s_refusal_wording_is_unsupported(monkeypatch, kind, message):
    backend = _backend_raising(monkeypatch, kind, message)
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    with pytest.raises(Unsupported) as info:
        backend.run(model, {"X": np.ones((1, 1, 2), np.float32)})
    assert str(info.value) == message  # the whole reason, as the EP gave it


def test_an_execution_provider_s_other_runtime_exception_stays_an_error(monkeypatch):
    backend = _backend_raising(monkeypatch, "RuntimeException",
                               "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : [OpenVINO-EP] Exception while Loading "
                               "Network: output/pos:0 node not found in graph cache")
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    with pytest.raises(Exception, match="graph cache") as info:
        backend.run(model, {"X": np.ones((1, 1, 2), np.float32)})
    assert not isinstance(info.value, Unsupported)

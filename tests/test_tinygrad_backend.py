"""The tinygrad adapter: ai.onnx MaxPool runs; another domain and an operator tinygrad lacks are
`unsupported`; the version is the installed distribution's (tinygrad has no __version__)."""

from __future__ import annotations

from importlib import metadata

import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import Unsupported, load_backend
from tests.test_reference_vs_naive import single_node_model as shapeless


def single_node_model(op, opset, inputs, outputs, shape=(1, 2, 3), **attrs):
    """As the suite builds them: the graph input with its shape (tinygrad needs it)."""
    model = shapeless(op, opset, inputs, outputs, **attrs)
    for dim in shape:
        model.graph.input[0].type.tensor_type.shape.dim.add().dim_value = dim
    return model

pytest.importorskip("tinygrad")


@pytest.fixture(scope="module")
def backend():
    return load_backend("tinygrad[device=PYTHON]")  # no compiler needed


def test_max_pool_runs_and_shows_tinygrad_s_per_plane_indices(backend):
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT), ("I", TensorProto.INT64)],
                              kernel_shape=[2])
    y, indices = backend.run(model, {"X": np.arange(6, dtype=np.float32).reshape(1, 2, 3)})
    assert y.tolist() == [[[1, 2], [4, 5]]]
    assert indices.tolist() == [[[1, 2], [1, 2]]]  # ONNX wants [4, 5] in the second plane: a known bug
    assert backend.version == metadata.version("tinygrad") and backend.details()["device"] == "PYTHON"


def test_another_domain_is_unsupported_rather_than_run_as_ai_onnx(backend):
    model = single_node_model("MaxPool", 11, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)],
                              shape=(1, 3, 2), domain="com.ms.internal.nhwc", kernel_shape=[2])
    with pytest.raises(Unsupported, match="no operators of domain com.ms.internal.nhwc"):
        backend.run(model, {"X": np.ones((1, 3, 2), np.float32)})


def test_an_operator_tinygrad_lacks_is_unsupported(backend):
    model = single_node_model("MaxPool", 1, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], shape=(1, 1, 2),
                              kernel_shape=[2])
    model.graph.node[0].op_type = "MaxRoiPool"
    with pytest.raises(Unsupported, match="not supported"):
        backend.run(model, {"X": np.ones((1, 1, 2), np.float32)})


def test_bfloat16_comes_back_as_bfloat16(backend):
    import ml_dtypes
    model = single_node_model("MaxPool", 22, [("X", TensorProto.BFLOAT16)], [("Y", TensorProto.BFLOAT16)],
                              kernel_shape=[2])
    (y,) = backend.run(model, {"X": np.array([[[1, 3, 2], [4, -1, 0.5]]], ml_dtypes.bfloat16)})
    assert y.dtype == ml_dtypes.bfloat16 and y.astype(np.float32).tolist() == [[[3, 3], [4, 0.5]]]


def test_every_expectation_is_linked_to_tinygrad_s_source_at_the_tested_version():
    import yaml
    from conformance.judge.expectations import load_expectations, load_skips
    from conformance.plugin import PACKAGE_DIR
    directory = PACKAGE_DIR.parent / "expectations"
    for load in (load_expectations, load_skips):
        listed = load(directory, "tinygrad")
        assert listed is not None and listed.entries
        raw = yaml.safe_load(listed.file.read_text())["entries"]
        assert all(e["link"].startswith("https://github.com/tinygrad/tinygrad/blob/v0.14.0/tinygrad/") for e in raw)


def test_the_repro_script_runs_tinygrad(tmp_path):
    """`conformance repro --backend=tinygrad` writes a script that runs tinygrad itself, not a stub: here
    a window over padding only, whose index tinygrad wraps (-2147483645), found and exit 1."""
    import os
    import subprocess
    import sys

    from conformance.repro import script_of

    item_id = "MaxPool-22/explicit_pad_questions_by_path/window_in_padding_strided-1d-planes1x1-y_indices[float32]"
    (tmp_path / "repro.py").write_text(script_of(item_id, "tinygrad", 0, None, None))
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DEV": "PYTHON"})  # no compiler needed
    assert done.returncode == 1 and "-2147483645" in done.stdout, done.stdout


def test_the_python_device_loads_with_no_compiler_on_path(tmp_path):
    """tinygrad.nn.onnx builds tensors as it is imported: the adapter imports it with its device in
    force, so `tinygrad[device=PYTHON]` needs no clang; tinygrad's default device without one is a
    backend that is not available, with one line naming what to install (never an error per item)."""
    import os
    import subprocess
    import sys

    probe = ("from conformance.backends import load_backend\n"
             "print(load_backend('tinygrad[device=PYTHON]').device)\n"
             "try:\n    print(load_backend('tinygrad').device)\n"
             "except ImportError as e:\n    print(e)\n")
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty directory: no clang, no compiler at all
    env.pop("DEV", None)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    python_device, default = done.stdout.splitlines()
    assert python_device == "PYTHON"
    assert "install clang" in default or default not in ("", "PYTHON"), default

"""The onnx2torch adapter: ai.onnx MaxPool runs (its Indices output dropped, a known bug); a version
onnx2torch has no converter for is `unsupported`; the version is onnx2torch's, torch's in the details."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import Unsupported, load_backend
from tests.test_reference_vs_naive import single_node_model as shapeless


def single_node_model(op, opset, inputs, outputs, shape=(1, 2, 3), **attrs):
    """As the suite builds them: the graph input with its shape (onnx2torch reads the rank from it)."""
    model = shapeless(op, opset, inputs, outputs, **attrs)
    for dim in shape:
        model.graph.input[0].type.tensor_type.shape.dim.add().dim_value = dim
    return model


@pytest.fixture(scope="module")
def backend():
    try:
        return load_backend("onnx2torch")
    except ImportError as e:  # not installed, or a torchvision built for another torch: the message says which
        pytest.skip(str(e))


def test_max_pool_runs_on_torch(backend):
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    (y,) = backend.run(model, {"X": np.arange(6, dtype=np.float32).reshape(1, 2, 3)})
    assert y.tolist() == [[[1, 2], [4, 5]]]
    assert backend.version == metadata.version("onnx2torch") and "torch" in backend.details()


def test_the_indices_output_is_dropped(backend):
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT), ("I", TensorProto.INT64)],
                              kernel_shape=[2])
    assert len(backend.run(model, {"X": np.arange(6, dtype=np.float32).reshape(1, 2, 3)})) == 1  # a known bug


def test_a_version_without_a_converter_is_unsupported(backend):
    model = single_node_model("MaxPool", 22, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    with pytest.raises(Unsupported, match="Converter is not implemented"):
        backend.run(model, {"X": np.ones((1, 2, 3), np.float32)})


@pytest.mark.parametrize(("item_id", "exit_code", "last_line"), [
    ("MaxPool-12/ranks/1d-y_indices[float32]", 1, "BUG: the runtime returns 1 outputs for a model that declares 2"),
    ("MaxPool-12/ranks/2d-y[float32]", 0, "as expected"),
])
def test_the_repro_script_runs_onnx2torch(backend, tmp_path, item_id, exit_code, last_line):
    """`conformance repro --backend=onnx2torch` writes a script that runs onnx2torch itself, not a stub."""
    from conformance.repro import script_of

    (tmp_path / "repro.py").write_text(script_of(item_id, "onnx2torch", 0, None, None))
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == exit_code and done.stdout.strip().splitlines()[-1].startswith(last_line), done.stdout

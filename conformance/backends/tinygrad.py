"""tinygrad (``pip install 'maxpool-conformance[tinygrad]'``), through its ONNX frontend
(``tinygrad.nn.onnx.OnnxRunner``), on a device of its own (``tinygrad[device=PYTHON]``; tinygrad's
default otherwise: its CPU device compiles kernels with clang).

tinygrad picks an operator's implementation by name and opset version; a node of another domain
(com.ms.internal.nhwc, com.microsoft, org.openvinotoolkit) would run as ai.onnx's MaxPool on data
of another layout, so the adapter calls such a model `unsupported` itself. NotImplementedError
("op='MaxUnpool' is not supported") is `unsupported` too. ``Tensor.numpy()`` gives bfloat16 as
float32: the adapter casts it back (exactly). tinygrad has no ``__version__``: the version is the
installed distribution's.
"""

from __future__ import annotations

import contextlib
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Sequence

import ml_dtypes
import numpy as np
import onnx

from .base import Unsupported, import_extra

ONNX_DOMAINS = ("", "ai.onnx")


def _array(tensor) -> np.ndarray:
    """Tensor.numpy() gives bfloat16 as float32 (exactly): back to bfloat16, as the model declares."""
    from tinygrad import dtypes

    array = tensor.numpy()
    return array.astype(ml_dtypes.bfloat16) if tensor.dtype == dtypes.bfloat16 else array


class TinygradBackend:
    name = "tinygrad"

    def __init__(self, device: str = ""):
        (helpers,) = import_extra("tinygrad", "tinygrad", "tinygrad.helpers")  # picks no device
        self.context = (lambda: helpers.Context(DEV=device)) if device else contextlib.nullcontext
        # tinygrad.nn.onnx builds tensors as it is imported (its operators' defaults), on the device
        # in force then: imported inside the context, a device that needs no compiler (PYTHON) serves.
        with self.context():
            try:
                (onnx_frontend, tinygrad) = import_extra("tinygrad", "tinygrad", "tinygrad.nn.onnx", "tinygrad")
                self.device = tinygrad.Device.DEFAULT
            except RuntimeError as e:  # "no usable devices": its CPU device compiles with clang
                raise ImportError(f"tinygrad finds no usable device ({e}): install clang for its CPU device "
                                  "(apt-get install clang), or pass tinygrad[device=PYTHON]") from e
        self.runner_class = onnx_frontend.OnnxRunner
        self.version = metadata.version("tinygrad")

    def details(self) -> dict[str, str]:
        return {"device": self.device, "frontend": "tinygrad.nn.onnx.OnnxRunner"}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        foreign = sorted({node.domain for node in model.graph.node} - set(ONNX_DOMAINS))
        if foreign:
            raise Unsupported(f"tinygrad's ONNX frontend has no operators of domain {', '.join(foreign)} "
                              "(it would run them as ai.onnx's)")
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "model.onnx")
            onnx.save(model, path)
            try:
                with self.context():
                    outputs = self.runner_class(path)(inputs)
                    return [_array(outputs[o.name]) for o in model.graph.output]
            except NotImplementedError as e:
                raise Unsupported(str(e) or type(e).__name__) from e

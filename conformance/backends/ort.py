"""ONNX Runtime on its CPU execution provider, with its default session options."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx

from .base import Unsupported


class OrtBackend:
    name = "ort"

    def __init__(self) -> None:
        try:
            import onnxruntime
        except ImportError as e:
            raise ImportError(
                "the ort backend needs onnxruntime: pip install 'maxpool-conformance[ort]'"
            ) from e
        self.ort = onnxruntime
        self.version = onnxruntime.__version__
        self.providers = ["CPUExecutionProvider"]
        self.options = onnxruntime.SessionOptions()
        # Refusals arrive as exceptions; ORT's own log lines would only repeat them.
        self.options.log_severity_level = 4

    def details(self) -> dict[str, str]:
        return {
            "providers": ",".join(self.providers),
            "graph_optimization_level": self.options.graph_optimization_level.name,
        }

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        not_implemented = self.ort.capi.onnxruntime_pybind11_state.NotImplemented
        try:
            session = self.ort.InferenceSession(
                model.SerializeToString(), sess_options=self.options, providers=self.providers
            )
            return session.run(None, inputs)
        except not_implemented as e:
            raise Unsupported(str(e)) from e

"""onnx's own ReferenceEvaluator, as an onnx Backend: a runtime under test like any other."""

from __future__ import annotations

from typing import Any

import onnx
from onnx.backend.base import Backend, BackendRep
from onnx.reference import ReferenceEvaluator

__version__ = onnx.__version__  # the version this backend reports


class OnnxReferenceRep(BackendRep):
    def __init__(self, model: onnx.ModelProto):
        self.session = ReferenceEvaluator(model)
        initialized = {init.name for init in model.graph.initializer}
        self.names = [vi.name for vi in model.graph.input if vi.name not in initialized]

    def run(self, inputs, **kwargs: Any):
        return self.session.run(None, dict(zip(self.names, inputs)))


class OnnxReferenceBackend(Backend):
    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> OnnxReferenceRep:
        return OnnxReferenceRep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

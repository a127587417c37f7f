"""Any ``onnx.backend.base.Backend`` subclass, the interface vendors already implement."""

from __future__ import annotations

import importlib.metadata
import sys
from typing import Any, Sequence

import numpy as np
import onnx
from onnx.backend.base import Backend as OnnxBackend

from .base import Unsupported


class OnnxBackendAdapter:
    """Runs items through ``prepare(model).run(inputs)``.

    ``is_compatible(model) == False`` and ``NotImplementedError`` mean the backend cannot run the
    operator: the item is ``unsupported``. Anything else it raises is a refusal.
    """

    def __init__(self, backend: type[OnnxBackend], name: str, device: str = "CPU"):
        self.backend, self.name, self.device = backend, name, device
        self.version = _version_of(backend)

    def details(self) -> dict[str, str]:
        return {"class": f"{self.backend.__module__}.{self.backend.__qualname__}", "device": self.device}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        if not self.backend.is_compatible(model, device=self.device):
            raise Unsupported(f"{self.backend.__name__}.is_compatible() is False for this model")
        try:
            rep: Any = self.backend.prepare(model, device=self.device)  # onnx's stub allows None; a backend returns its rep
            initialized = {init.name for init in model.graph.initializer}
            ordered = [inputs[vi.name] for vi in model.graph.input if vi.name not in initialized]
            return list(rep.run(ordered))
        except NotImplementedError as e:
            raise Unsupported(str(e) or type(e).__name__) from e


def _version_of(backend: type) -> str:
    module = sys.modules.get(backend.__module__)
    top = backend.__module__.split(".")[0]
    version = getattr(module, "__version__", None) or getattr(sys.modules.get(top), "__version__", None)
    if version:
        return str(version)
    for dist in importlib.metadata.packages_distributions().get(top, []):
        return importlib.metadata.version(dist)
    return "unknown"

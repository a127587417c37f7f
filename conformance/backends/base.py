"""The interface a backend offers the suite: run one model on named inputs."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np
import onnx


class Unsupported(Exception):
    """The backend says it cannot run this model's operator, version or element type."""


@runtime_checkable
class Backend(Protocol):
    name: str
    version: str

    def details(self) -> dict[str, str]:
        """Settings worth printing in the report header (providers, options)."""

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        """Outputs in the order of ``model.graph.output``. Raise :class:`Unsupported` when the
        backend cannot run the operator; any other exception is a refusal (must-reject items)
        or an error (valid items)."""

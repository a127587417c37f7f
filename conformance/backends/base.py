"""The interface a backend offers the suite: run one model on named inputs."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol, Sequence, runtime_checkable

import numpy as np
import onnx


class Unsupported(Exception):
    """The backend says it cannot run this model's operator, version or element type: a declared
    refusal. ``NotImplementedError`` declares the same (the judge reads it so); anything else a
    backend raises on a valid model is a bug of the backend's, never ``unsupported``."""


@dataclass(frozen=True)
class Capability:
    """One way a runtime words "this build cannot run that" (a capability it lacks, not a fault):
    the words (a regular expression), where the runtime writes them, and a message it gave, quoted
    (tests/test_declared_refusals.py checks each entry's words against its message). A built-in
    adapter raises :class:`Unsupported` for a message its table matches, and nothing else."""

    words: str
    source: str
    example: str


def declared(text: str, table: Sequence[Capability]) -> bool:
    """Whether ``text`` is a refusal ``table`` classifies as a capability the runtime lacks."""
    return any(re.search(entry.words, text) for entry in table)


@runtime_checkable
class Backend(Protocol):
    name: str
    version: str

    def details(self) -> dict[str, str]:
        """Settings worth printing in the report header (providers, options)."""

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        """Outputs in the order of ``model.graph.output``. Raise :class:`Unsupported` (or
        ``NotImplementedError``) when the backend cannot run the operator; any other exception is
        a refusal (must-reject items) or an error (valid items), and on a valid twin a bug."""


def import_extra(backend: str, extra: str, *modules: str) -> list[ModuleType]:
    """``modules`` imported for ``backend``; where one is missing, an ImportError that names the
    extra installing them (``conformance backends`` shows it as the reason the backend is absent)."""
    try:
        return [importlib.import_module(module) for module in modules]
    except ImportError as e:
        needs = " and ".join(dict.fromkeys(module.partition(".")[0] for module in modules))
        raise ImportError(f"the {backend} backend needs {needs}: pip install 'maxpool-conformance[{extra}]'") from e

"""Stage 3 of the pipeline: find the backend named by ``--backend``.

A name is looked up in the entry-point group ``conformance.backends`` (``reference`` and ``ort``
are built in); ``package.module:Name`` imports a class directly. Either may be an
``onnx.backend.base.Backend`` subclass or a class with this package's :class:`Backend` interface.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from onnx.backend.base import Backend as OnnxBackend

from .base import Backend, Unsupported
from .onnx_backend import OnnxBackendAdapter

ENTRY_POINT_GROUP = "conformance.backends"


class BackendNotFound(LookupError):
    pass


def registered_backends() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load_backend(spec: str) -> Backend:
    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        try:
            target = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as e:
            raise BackendNotFound(f"cannot import backend {spec!r}: {e}") from e
    else:
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            known = ", ".join(sorted(registered_backends())) or "none: is the suite installed (pip install -e .)?"
            raise BackendNotFound(
                f"no backend named {spec!r} in entry-point group {ENTRY_POINT_GROUP} (registered: {known}); "
                "or pass package.module:ClassName"
            )
        target = found[0].load()
    if isinstance(target, type) and issubclass(target, OnnxBackend):
        return OnnxBackendAdapter(target, name=spec)
    backend = target() if isinstance(target, type) else target
    if not isinstance(backend, Backend):
        raise BackendNotFound(
            f"{spec!r} is neither an onnx.backend.base.Backend subclass nor an object with "
            "name, version, details() and run(model, inputs)"
        )
    return backend


__all__ = ["Backend", "BackendNotFound", "Unsupported", "load_backend", "registered_backends"]

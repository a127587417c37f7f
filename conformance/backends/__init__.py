"""Stage 3 of the pipeline: find the backend named by ``--backend``.

A name is looked up in the entry-point group ``conformance.backends`` (``reference``, ``ort`` and
``onnx-reference`` are built in); ``package.module:Name`` imports a class directly. Either may be
an ``onnx.backend.base.Backend`` subclass or a class with this package's :class:`Backend`
interface, which may take options: ``ort[optimization=disabled,threads=1]``.
"""

from __future__ import annotations

import importlib
import os
import sys
from importlib.metadata import entry_points
from typing import Any

from onnx.backend.base import Backend as OnnxBackend

from .base import Backend, Unsupported
# What running a backend can end in, and the check of its answer, for the judge: process
# isolation defines them, and the judge reads them here rather than from the runner's insides.
from .isolation.errors import (BackendCrashed, BackendGarbage, BackendLost, BackendTimedOut, IsolationFailed,
                               RaisedInBackend)
from .isolation.wire import malformed, process_output
from .onnx_backend import OnnxBackendAdapter

ENTRY_POINT_GROUP = "conformance.backends"


class BackendNotFound(LookupError):
    pass


def registered_backends() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def split_specs(text: str) -> list[str]:
    """``reference,ort[optimization=disabled,threads=1]`` -> the two specs (commas inside [] stay)."""
    specs, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            specs.append(current.strip())
            current = ""
        else:
            current += char
    return [s for s in specs + [current.strip()] if s]


def _options(spec: str) -> tuple[str, dict[str, str]]:
    """``ort[optimization=disabled,threads=1]`` -> ("ort", {"optimization": "disabled", "threads": "1"})."""
    if not spec.endswith("]") or "[" not in spec:
        return spec, {}
    base, _, inside = spec[:-1].partition("[")
    options = {}
    for pair in filter(None, inside.split(",")):
        key, equals, value = pair.partition("=")
        if not equals:
            raise BackendNotFound(f"option {pair!r} of {spec!r} is not key=value")
        options[key.strip()] = value.strip()
    return base, options


def load_backend(spec: str) -> Backend:
    given = spec
    spec, options = _options(spec)
    target: Any  # a class: an onnx Backend, or one with this package's interface
    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        if os.getcwd() not in sys.path:  # as `python -m pytest` would: an adapter module beside you imports
            sys.path.append(os.getcwd())
        try:
            target = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as e:
            raise BackendNotFound(f"cannot import backend {spec!r}: {e}") from e
        except Exception as e:
            raise BackendNotFound(f"cannot import backend {spec!r}: {type(e).__name__}: {e}") from e
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
        device = options.pop("device", "CPU")  # prepare(model, device=...): onnx's "CPU", "CUDA", "CUDA:1"
        if options and not hasattr(target, "configured"):
            raise BackendNotFound(f"{spec!r} is an onnx Backend class: its one option is device, not {', '.join(options)}")
        if options:  # a Backend class may offer `configured(**options)`, returning another class
            try:
                target = target.configured(**options)  # type: ignore[attr-defined]  # hasattr, above
            except (TypeError, ValueError) as e:
                raise BackendNotFound(f"{spec!r} refuses its options {options}: {e}") from e
        if not target.supports_device(device):
            raise BackendNotFound(f"{spec!r}: supports_device({device!r}) is False")
        return OnnxBackendAdapter(target, name=given, device=device)
    try:
        backend = target(**options) if isinstance(target, type) else target
    except (TypeError, ValueError) as e:
        raise BackendNotFound(f"{spec!r} refuses its options {options}: {e}") from e
    except ImportError:
        raise
    except Exception as e:  # a runtime that does not start (an API its release lacks): one line
        raise BackendNotFound(f"{spec!r} does not start: {type(e).__name__}: {e}") from e
    if not isinstance(backend, Backend):
        raise BackendNotFound(
            f"{spec!r} is neither an onnx.backend.base.Backend subclass nor an object with "
            "name, version, details() and run(model, inputs)"
        )
    return backend


__all__ = ["Backend", "BackendCrashed", "BackendGarbage", "BackendLost", "BackendNotFound", "BackendTimedOut", "IsolationFailed",
           "OnnxBackendAdapter", "RaisedInBackend", "Unsupported", "load_backend", "malformed", "process_output", "registered_backends",
           "split_specs"]

"""Process isolation: the backend under test runs in a child process, one item at a time.

A backend that segfaults, aborts, hangs or exhausts its memory then costs one item: the item is
reported as ``crash`` or ``timeout`` and a fresh child serves the next one. The child is started
with the ``spawn`` method (no state shared with the runner) and, optionally, an address-space limit.
"""

from __future__ import annotations

import multiprocessing
import signal
import traceback
from typing import Any, Sequence

import numpy as np
import onnx

from .base import Unsupported

START_TIMEOUT_S = 120


class BackendCrashed(Exception):
    """The child process died while running an item."""


class BackendTimedOut(Exception):
    """The backend did not answer within the per-item timeout; its process was killed."""


class BackendGarbage(Exception):
    """The backend returned something other than a list of numpy arrays."""


def malformed(outputs: Any) -> str | None:
    """What is wrong with the structure of a backend's answer, or None."""
    if not isinstance(outputs, (list, tuple)):
        return f"returned {type(outputs).__name__}, not a list of arrays"
    for index, output in enumerate(outputs):
        if not isinstance(output, np.ndarray):
            return f"output {index} is {type(output).__name__}, not a numpy array"
    return None


class IsolatedBackend:
    """Forwards ``run`` to a child process that loads the backend named ``spec``."""

    def __init__(self, spec: str, name: str, version: str, timeout_s: float, memory_limit_mib: int | None):
        self.spec, self.name, self.version = spec, name, version
        self.timeout_s, self.memory_limit_mib = timeout_s, memory_limit_mib
        self.process: multiprocessing.process.BaseProcess | None = None
        self.connection = None

    def details(self) -> dict[str, str]:
        limit = f"{self.memory_limit_mib} MiB" if self.memory_limit_mib else "none"
        return {"isolation": f"child process, timeout {self.timeout_s:g} s, memory limit {limit}"}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        if self.process is None or not self.process.is_alive():
            self._start()
        self.connection.send((model.SerializeToString(), inputs))
        if not self.connection.poll(self.timeout_s):
            self.close()
            raise BackendTimedOut(f"no answer within {self.timeout_s:g} s; the backend's process was killed")
        try:
            kind, *payload = self.connection.recv()
        except (EOFError, OSError):
            raise BackendCrashed(self._death()) from None
        if kind == "outputs":
            return payload[0]
        if kind == "unsupported":
            raise Unsupported(payload[0])
        if kind == "garbage":
            raise BackendGarbage(payload[0])
        raise RaisedInBackend(*payload)

    def close(self) -> None:
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()
            self.process.join()
            self.process = None

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_serve, args=(self.spec, self.memory_limit_mib, child_end), daemon=True)
        self.process.start()
        child_end.close()
        if not self.connection.poll(START_TIMEOUT_S):
            self.close()
            raise BackendTimedOut(f"the backend's process did not start within {START_TIMEOUT_S} s")
        try:
            kind, message = self.connection.recv()
        except (EOFError, OSError):
            raise BackendCrashed(f"the backend's process died while starting: {self._death()}") from None
        if kind != "ready":
            self.close()
            raise RuntimeError(f"the backend's process could not load {self.spec!r}: {message}")

    def _death(self) -> str:
        self.process.join(timeout=5)
        code = self.process.exitcode
        self.process = None
        if code is not None and code < 0:
            return f"the backend's process was killed by {signal.Signals(-code).name}"
        return f"the backend's process exited with status {code}"


class RaisedInBackend(Exception):
    """An exception the backend raised in the child; ``type_name`` and ``text`` are the original's."""

    def __init__(self, type_name: str, message: str, text: str):
        super().__init__(message)
        self.type_name, self.text = type_name, text


def _serve(spec: str, memory_limit_mib: int | None, connection) -> None:
    if memory_limit_mib:
        import resource

        limit = memory_limit_mib * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from . import load_backend

    try:
        backend = load_backend(spec)
    except Exception as e:  # noqa: BLE001 - reported to the runner
        connection.send(("failed", f"{type(e).__name__}: {e}"))
        return
    connection.send(("ready", ""))
    while True:
        try:
            model_bytes, inputs = connection.recv()
        except EOFError:
            return
        try:
            outputs = backend.run(onnx.load_from_string(model_bytes), inputs)
        except Unsupported as e:
            connection.send(("unsupported", str(e)))
            continue
        except BaseException as e:  # noqa: BLE001 - every failure of the backend is a result
            connection.send(("raised", type(e).__name__, str(e), "".join(traceback.format_exception(e))))
            continue
        problem = malformed(outputs)
        connection.send(("garbage", problem) if problem else ("outputs", list(outputs)))

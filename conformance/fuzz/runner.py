"""The isolated runner of `conformance fuzz`: the backend in its child process, as the suite runs it,
but with every answer a frame of outputs.

The suite's runner, when the backend raises, waits 50 ms for the output the backend may have
written meanwhile (which its report shows), on every refusal; a fuzz of ONNX Runtime draws a
refusal in one configuration of three, and those waits were most of its time. Here the child's
backend is wrapped by :class:`Answering`, which turns an exception into an answer: the backend's
type name, message and text, as the runner's own describe() gives them, in a first output. The
runner here raises from it what the suite's runner raises (``RaisedInBackend``, ``BackendGarbage``);
a refusal (``Unsupported``), a crash, a timeout and garbage on the channel stay the suite runner's
own. What is lost: the backend's stdout and stderr in a raised answer's text (a crash's still has them).

The child runs this backend alone, and tells it so (``alone_in_process()``, where it has one): ONNX
Runtime then takes its process-wide thread pool rather than starting threads for every session.
And the child starts first (:func:`start`), in a thread of its own that asks it whether it is
ready, so that importing the runtime there overlaps loading it here (for its name, version and
details) and the work before the first model.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from typing import Any, Sequence
from urllib.parse import quote, unquote

import numpy as np
import onnx

from ..backends import Backend, BackendGarbage, RaisedInBackend, Unsupported, load_backend
from ..backends.isolated import IsolatedBackend, describe, plain_outputs


class Answering:
    """In the child: the backend named ``backend`` (a quoted spec), its exceptions as answers."""

    def __init__(self, backend: str):
        self.backend = load_backend(unquote(backend))
        getattr(self.backend, "alone_in_process", lambda: None)()
        self.name, self.version = self.backend.name, self.backend.version

    def details(self) -> dict[str, str]:
        return self.backend.details()

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        if model.graph.name == READY and not model.graph.node:
            return [_status({})]
        try:
            outputs = self.backend.run(model, inputs)
        except Unsupported:
            raise  # answered as a refusal, without the wait
        except BaseException as e:  # noqa: BLE001 - every failure of the backend is an answer
            name, message, text = describe(e)
            return [_status({"raised": {"type": name, "message": message, "text": text}})]
        try:
            plain_outputs(outputs)  # the runner's own check, so that garbage is named as it names it
        except BackendGarbage as e:
            return [_status({"garbage": str(e)})]
        except BaseException as e:  # noqa: BLE001 - e.g. MemoryError reading a huge output
            return [_status({"garbage": f"its outputs could not be read: {describe(e)[2].splitlines()[0]}"})]
        return [_status({}), *outputs]


READY = "conformance fuzz: ready?"  # the graph of the model that asks the child whether it has started


def _status(answer: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(json.dumps(answer).encode(), np.uint8)


def start(spec: str, timeout_s: float, memory_limit_mib: int | None) -> tuple[Backend, "FuzzRunner"]:
    """The backend ``spec``, loaded here, and its runner, whose child starts before it loads."""
    runner = FuzzRunner(spec, timeout_s, memory_limit_mib)
    try:
        backend = load_backend(spec)
    except BaseException:
        runner.close()
        raise
    runner.name = runner.isolated.name = backend.name
    runner.version = runner.isolated.version = backend.version
    return backend, runner


class FuzzRunner:
    """The backend ``spec`` in a child process (see :class:`IsolatedBackend`), answering as
    :class:`Answering` does; raises what the suite's runner raises. Its name and version are the
    backend's, once :func:`start` has loaded it here."""

    def __init__(self, spec: str, timeout_s: float, memory_limit_mib: int | None, name: str = "?", version: str = "?"):
        self.name, self.version = name, version
        self.isolated = IsolatedBackend(f"{__name__}:Answering[backend={quote(spec, safe='')}]", name, version,
                                        timeout_s, memory_limit_mib)
        self.starting: threading.Thread | None = threading.Thread(target=self._start, daemon=True,
                                                                   name="conformance fuzz: starting the backend")
        self.starting.start()

    def _start(self) -> None:
        """Start the child (a failure to is left to the first model, which starts it afresh)."""
        ready = onnx.ModelProto()
        ready.graph.name = READY
        try:
            self.isolated.run(ready, {})
        except BaseException:  # noqa: BLE001 - the first model meets it again, as the suite's runner would
            pass

    def _started(self) -> None:
        """Until the thread that starts the child is done: the runner is then this thread's alone."""
        if self.starting is not None:
            self.starting.join()
            self.starting = None

    @classmethod
    def like(cls, suite_s: IsolatedBackend) -> "FuzzRunner":
        """A runner of the backend that the suite's runner ``suite_s`` runs, with its limits."""
        return cls(suite_s.spec, suite_s.timeout_s, suite_s.memory_limit_mib, suite_s.name, suite_s.version)

    def details(self) -> dict[str, str]:
        return self.isolated.details()

    def close(self) -> None:
        if self.starting is not None:  # a child slow to start (or Ctrl-C meanwhile) is not waited for
            child = self.isolated.child
            if child is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)  # its process group, as close() kills it
        self._started()
        self.isolated.close()

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        self._started()
        answered = self.isolated.run(model, inputs)
        try:
            status, *outputs = answered
            answer = json.loads(answered[0].tobytes())
        except ValueError:
            raise BackendGarbage("the backend's process answered without its status") from None
        if "raised" in answer:
            raised = answer["raised"]
            raise RaisedInBackend(str(raised["type"]), str(raised["message"]), str(raised["text"]))
        if "garbage" in answer:
            raise BackendGarbage(str(answer["garbage"]))
        return outputs

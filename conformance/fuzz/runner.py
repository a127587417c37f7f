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
"""

from __future__ import annotations

import json
from typing import Any, Sequence
from urllib.parse import quote, unquote

import numpy as np
import onnx

from ..backends import BackendGarbage, RaisedInBackend, Unsupported, load_backend
from ..backends.isolated import IsolatedBackend, describe, plain_outputs


class Answering:
    """In the child: the backend named ``backend`` (a quoted spec), its exceptions as answers."""

    def __init__(self, backend: str):
        self.backend = load_backend(unquote(backend))
        self.name, self.version = self.backend.name, self.backend.version

    def details(self) -> dict[str, str]:
        return self.backend.details()

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
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


def _status(answer: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(json.dumps(answer).encode(), np.uint8)


class FuzzRunner:
    """The backend ``spec`` in a child process (see :class:`IsolatedBackend`), answering as
    :class:`Answering` does; raises what the suite's runner raises."""

    def __init__(self, spec: str, name: str, version: str, timeout_s: float, memory_limit_mib: int | None):
        self.isolated = IsolatedBackend(f"{__name__}:Answering[backend={quote(spec, safe='')}]", name, version,
                                        timeout_s, memory_limit_mib)
        self.name, self.version = name, version

    def details(self) -> dict[str, str]:
        return self.isolated.details()

    def close(self) -> None:
        self.isolated.close()

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
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

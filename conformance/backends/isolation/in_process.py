"""``--isolation=none``: the backend in the test process, its answers still copied plain."""

from __future__ import annotations

import os
import signal
import threading
from typing import Sequence

import numpy as np
import onnx

from ..base import Unsupported
from .errors import RaisedInBackend
from .wire import describe, plain_copies


class InProcessBackend:
    """``--isolation=none``: the backend runs in the test process. It still gets copies of the
    model and inputs, its answer is copied through the plain form, whatever it raises (SystemExit
    and KeyboardInterrupt included) is a result, and the working directory and signal handlers
    it changes are put back. A real Ctrl-C during ``run`` still interrupts the run."""

    def __init__(self, backend):
        self.backend, self.name, self.version = backend, backend.name, backend.version

    def details(self) -> dict[str, str]:
        return {"isolation": "none (the test process)"}

    def close(self) -> None:
        pass

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        cwd = os.getcwd()
        handlers = {s: signal.getsignal(s) for s in signal.valid_signals()}
        interrupted: list[int] = []
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, _noting(interrupted, handlers[signal.SIGINT]))
        try:
            outputs = self.backend.run(model, inputs)
        except Unsupported as e:
            raise Unsupported(describe(e)[1]) from None
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt) and interrupted:
                raise
            raise RaisedInBackend(*describe(e)) from None
        finally:
            _restore(cwd, handlers)
        return plain_copies(outputs)


def _noting(interrupted: list, previous):
    """A SIGINT handler that notes a real Ctrl-C, then does what ``previous`` did."""

    def handler(number, frame):
        interrupted.append(number)
        if callable(previous):
            previous(number, frame)
        elif previous != signal.SIG_IGN:
            signal.default_int_handler(number, frame)

    return handler


def _restore(cwd: str, handlers: dict) -> None:
    if os.getcwd() != cwd:
        os.chdir(cwd)
    if threading.current_thread() is not threading.main_thread():
        return
    for number, handler in handlers.items():
        if handler is not None and signal.getsignal(number) is not handler:
            signal.signal(number, handler)


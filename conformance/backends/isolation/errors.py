"""What running a backend can end in besides an answer: the errors the runners raise."""

from __future__ import annotations


class BackendLost(Exception):
    """The backend's process is gone; ``details`` adds its last words on stdout and stderr."""

    def __init__(self, message: str, output: str = ""):
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
        super().__init__(f"{message}; its last output: {last[:200]}" if last else message)
        self.details = f"{message}\n\nthe backend's last output:\n{output}" if last else message


class BackendCrashed(BackendLost):
    """The child process died while running an item."""


class BackendTimedOut(BackendLost):
    """The backend did not answer within the per-item timeout; its process group was killed."""


class IsolationFailed(RuntimeError):
    """The suite could not set up the backend's process (e.g. its memory limit): the suite's
    failure, never charged to the backend."""


class BackendGarbage(Exception):
    """The backend returned something other than a list of numpy arrays."""


class RaisedInBackend(Exception):
    """An exception the backend raised; ``type_name`` and ``text`` (its line and where it was
    raised, never its objects) describe the original."""

    def __init__(self, type_name: str, message: str, text: str):
        super().__init__(message)
        self.type_name, self.text = type_name, text


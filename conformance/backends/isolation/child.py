"""The child: a fresh interpreter that loads the backend and answers the runner's requests, one
at a time, in a process group that a watchdog kills when the runner goes."""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any

import onnx

from ..base import Unsupported
from .errors import BackendGarbage
from .reaping import TOKEN_VARIABLE, become_subreaper, kill_family
from .wire import describe, plain_array, plain_outputs, read_frame, write_frame

# True in the isolated child: a backend whose helper process dies may then end the child, so that
# the item is a crash (in the test process it raises instead).
IN_CHILD = False


def serve(config: dict[str, Any]) -> None:
    """The child: load the backend, then answer one request at a time until the runner goes."""
    global IN_CHILD
    IN_CHILD = True
    reader, writer, lifeline = config["fds"]
    become_subreaper()  # before the watchdog and the backend start anything
    _watchdog(lifeline, (reader, writer))
    if config["memory_limit_mib"]:
        import resource

        limit = config["memory_limit_mib"] * 2**20
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError) as e:
            write_frame(writer, {"kind": "isolation failed", "message": f"cannot set the memory limit "
                                                                     f"{config['memory_limit_mib']} MiB: {e}"})
            return
    from .. import load_backend

    try:
        backend = load_backend(config["spec"])
    except BaseException as e:  # noqa: BLE001 - reported to the runner
        write_frame(writer, {"kind": "failed", "message": describe(e)[2].splitlines()[0]})
        return
    try:
        write_frame(writer, {"kind": "ready"})
        while (request := read_frame(reader)) is not None:
            write_frame(writer, *_respond(backend, *request))
    except OSError as e:  # the backend closed or broke the channel: one line for its last output
        with contextlib.suppress(OSError):
            os.write(2, f"conformance: the runner's channel broke ({describe(e)[2].splitlines()[0]})\n".encode())
        os._exit(1)


def _respond(backend, header: dict[str, Any], buffers: list[memoryview]) -> tuple[dict[str, Any], list]:
    model_bytes, *data = buffers
    inputs = {i["name"]: plain_array(i["dtype"], i["shape"], d) for i, d in zip(header["inputs"], data)}
    try:
        outputs = backend.run(onnx.load_from_string(bytes(model_bytes)), inputs)
    except Unsupported as e:
        return {"kind": "unsupported", "message": describe(e)[1]}, []
    except BaseException as e:  # noqa: BLE001 - every failure of the backend is a result
        name, message, text = describe(e)
        return {"kind": "raised", "type": name, "message": message, "text": text}, []
    try:
        plain = plain_outputs(outputs)
    except BackendGarbage as e:
        return {"kind": "garbage", "message": str(e)}, []
    except BaseException as e:  # noqa: BLE001 - e.g. MemoryError copying a huge output
        return {"kind": "garbage", "message": f"its outputs could not be read: {describe(e)[2].splitlines()[0]}"}, []
    return ({"kind": "outputs", "outputs": [{"dtype": t, "shape": list(s)} for t, s, _ in plain]},
            [data for _, _, data in plain])


def _watchdog(lifeline: int, channel: tuple[int, int]) -> None:
    """Fork a process that kills this process and all it started (``reaping``) once the runner's
    end of ``lifeline`` closes, which happens however the runner ends."""
    served = os.getpid()
    if os.fork() == 0:
        try:
            for fd in channel:
                os.close(fd)
            while os.read(lifeline, 1):
                pass
        finally:
            kill_family(served, os.environ.get(TOKEN_VARIABLE))
            os.killpg(0, signal.SIGKILL)
    os.close(lifeline)


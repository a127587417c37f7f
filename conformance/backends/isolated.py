"""Process isolation: the backend under test runs in a child process, one item at a time.

A backend that segfaults, aborts, exits, hangs, exhausts its memory or forks processes of its own
then costs one item, reported as ``crash`` or ``timeout``, and a fresh child serves the next one.
The child is a fresh interpreter in a session of its own: when an item ends in a crash or a
timeout, and when the run ends, its whole process group is killed, and a watchdog process in that
group kills it if the runner dies first (even by SIGKILL). The runner waits on the child's
process as well as on its pipe, so a grandchild that keeps the pipe open does not turn a crash
into a timeout.

Nothing a backend returns is unpickled: answers cross the process boundary as a JSON header and
raw buffers (element type, shape, bytes), and the runner builds plain numpy arrays from them.
Without isolation (:class:`InProcessBackend`) answers are copied through the same plain form, so
the judge never holds an object of the backend's. The backend's stdout and stderr go to a pipe of
which the runner keeps the last lines, shown with a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from typing import Any, Sequence

import ml_dtypes
import numpy as np
import onnx

from .base import Unsupported

START_TIMEOUT_S = 120
ANSWER_LIMIT_BYTES = 2**30  # a larger answer is garbage: the runner does not read it
HEADER_LIMIT_BYTES = 2**20
MESSAGE_LIMIT = 2000  # characters of an exception's text that cross back
TAIL_BYTES = 4096  # of the backend's stdout and stderr, kept for a crash's details
POLL_S = 0.05  # without pidfd (not Linux): how often a silent child is checked for life
PREFIX = struct.Struct("<QI")  # a frame's length (after the prefix) and its JSON header's length
# True in the isolated child: a backend whose helper process dies may then end the child, so that
# the item is a crash (in the test process it raises instead).
IN_CHILD = False
BOOTSTRAP = ("import json, sys; config = json.loads(sys.argv[1]); sys.path[:] = config['sys_path']; "
             "from conformance.backends.isolated import serve; serve(config)")


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


def malformed(outputs: Any) -> str | None:
    """What is wrong with the structure of a backend's answer, or None."""
    if not isinstance(outputs, (list, tuple)):
        return f"returned {_type_name(outputs)}, not a list of arrays"
    for index, output in enumerate(outputs):
        if not isinstance(output, np.ndarray):
            return f"output {index} is {_type_name(output)}, not a numpy array"
    return None


def dtype_text(dtype: np.dtype) -> str | None:
    """How an element type crosses the boundary: numpy's own as ``dtype.str`` ('<f4'),
    ml_dtypes' by name ('bfloat16'); None for anything that is no tensor element type."""
    if dtype.type.__module__.startswith("ml_dtypes"):
        return dtype.name
    if dtype.kind in "biufc" and dtype.fields is None and dtype.subdtype is None:
        return dtype.str
    return None


def dtype_from_text(text: Any) -> np.dtype | None:
    if not isinstance(text, str):
        return None
    extension = getattr(ml_dtypes, text, None)
    try:
        dtype = np.dtype(extension if isinstance(extension, type) and issubclass(extension, np.generic) else text)
    except (TypeError, ValueError):
        return None
    return dtype if dtype_text(dtype) == text else None


def plain_outputs(outputs: Any) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    """(element type, shape, bytes as uint8) per output, read through numpy's base class, so an
    array subclass's overrides never run; raises BackendGarbage."""
    problem = malformed(outputs)
    if problem:
        raise BackendGarbage(problem)
    plain, total = [], 0
    for index, output in enumerate(outputs):
        base = np.ndarray.view(output, np.ndarray)
        text = dtype_text(base.dtype)
        if text is None:
            raise BackendGarbage(f"output {index} has element type {base.dtype}, which no tensor has")
        total += base.nbytes
        if total > ANSWER_LIMIT_BYTES:
            raise BackendGarbage(f"the outputs hold more than {ANSWER_LIMIT_BYTES // 2**20} MiB "
                                 f"(output {index}: {list(base.shape)} {base.dtype})")
        plain.append((text, base.shape, np.ascontiguousarray(base).reshape(-1).view(np.uint8)))
    return plain


def plain_copies(outputs: Any) -> list[np.ndarray]:
    """The outputs as new, plain numpy arrays (what the runner builds from the child's answer)."""
    return [_array(text, shape, bytearray(data)) for text, shape, data in plain_outputs(outputs)]


def _array(text: str, shape: Sequence[int], data: bytearray | memoryview) -> np.ndarray:
    return np.frombuffer(data, dtype_from_text(text)).reshape(shape)


def describe(e: BaseException) -> tuple[str, str, str]:
    """(type name, message, text) of an exception, without calling anything that could fail
    unguarded: an exception whose __str__ raises is still described."""
    name = _type_name(e)
    try:
        message = str(e)[:MESSAGE_LIMIT]
    except BaseException as failure:  # noqa: BLE001 - the backend's __str__ may raise anything
        message = f"(its str() raised {_type_name(failure)})"
    text = f"{name}: {message}" if message else name
    output = process_output(e)
    if output:
        text += "\n" + output
    frame = e.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    if frame is not None:
        code = frame.tb_frame.f_code
        text += f"\n  raised at {code.co_filename}:{frame.tb_lineno} in {code.co_name}"
    return name, message, text


def process_output(e: BaseException) -> str:
    """What a failed subprocess wrote, where the exception keeps it (``subprocess.run(check=True,
    capture_output=True)``): a backend that shells out says why on its stderr. Its end, if long."""
    if not isinstance(e, (subprocess.CalledProcessError, subprocess.TimeoutExpired)):
        return ""
    parts = []
    for label, value in (("stderr", e.stderr), ("stdout", e.output)):
        text = value.decode(errors="replace") if isinstance(value, bytes) else value
        if isinstance(text, str) and text.strip():
            text = text.strip()
            parts.append(f"{label}:\n" + (f"...{text[-MESSAGE_LIMIT:]}" if len(text) > MESSAGE_LIMIT else text))
    return "\n".join(parts)


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except BaseException:  # noqa: BLE001 - a metaclass may make even this fail
        return "object"


def effective_memory_limit(requested_mib: int | None) -> tuple[int | None, str]:
    """The address-space limit the backend's process gets, and a note where it is not the one
    asked for: a process cannot raise the limit it inherits (``ulimit -v``, ``prlimit --as``, a
    container), so the lower of the two applies, and the report header says so."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    inherited = min((v for v in (soft, hard) if v != resource.RLIM_INFINITY), default=None)
    if inherited is None or (requested_mib and requested_mib * 2**20 <= inherited):
        return requested_mib, ""
    inherited_mib = inherited // 2**20
    asked = f"the {requested_mib} MiB asked" if requested_mib else "no limit asked"
    return inherited_mib, f" (inherited by this process, below {asked})"


class IsolatedBackend:
    """Forwards ``run`` to a child process that loads the backend named ``spec``."""

    def __init__(self, spec: str, name: str, version: str, timeout_s: float, memory_limit_mib: int | None):
        self.spec, self.name, self.version = spec, name, version
        self.timeout_s = timeout_s
        self.memory_limit_mib, self.memory_note = effective_memory_limit(memory_limit_mib)
        self.child: Any = None  # the subprocess.Popen, once started

    def details(self) -> dict[str, str]:
        limit = f"{self.memory_limit_mib} MiB" if self.memory_limit_mib else "none"
        return {"isolation": f"child process, timeout {self.timeout_s:g} s, memory limit {limit}{self.memory_note}"}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        if self.child is not None and self.child.poll() is not None:
            message, output = self._death(), self.tail.take()  # e.g. a thread the backend left running
            self.close()
            raise BackendCrashed(f"{message}, after it answered the previous item", output)
        try:
            if self.child is None:
                self._start()
            self.tail.clear()
            deadline = time.monotonic() + self.timeout_s
            names = list(inputs)
            arrays = [np.ascontiguousarray(inputs[n]) for n in names]
            self._send({"inputs": [{"name": n, "dtype": dtype_text(a.dtype), "shape": list(a.shape)}
                                   for n, a in zip(names, arrays)]},
                       [model.SerializeToString(), *(a.reshape(-1).view(np.uint8) for a in arrays)], deadline)
            header, buffers = self._receive(deadline)
            outputs = self._outputs(header, buffers) if header.get("kind") == "outputs" else None
        except BaseException:  # a crash, a timeout, garbage on the channel or a Ctrl-C: start afresh
            self.close()
            raise
        kind = header.get("kind")
        if outputs is not None:
            return outputs
        if kind == "unsupported":
            raise Unsupported(str(header.get("message")))
        if kind == "garbage":
            raise BackendGarbage(str(header.get("message")))
        if kind == "raised":  # with what it wrote meanwhile: a command it shelled out to says why on stderr
            output = self.tail.take()
            text = str(header.get("text")) + (f"\n\nthe backend's output meanwhile:\n{output}" if output.strip() else "")
            raise RaisedInBackend(str(header.get("type")), str(header.get("message")), text)
        self.close()
        raise BackendGarbage(f"the backend's process answered {str(kind)[:40]!r}")

    def close(self) -> None:
        """Kill the child's whole process group (the watchdog and whatever the backend forked)."""
        if self.child is None:
            return
        try:
            os.killpg(self.child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.child.wait()
        for fd in self.fds:
            os.close(fd)
        self.child = None

    def _start(self) -> None:
        to_child, from_child, lifeline, output = os.pipe(), os.pipe(), os.pipe(), os.pipe()
        inherited = (to_child[0], from_child[1], lifeline[0])
        config = {"spec": self.spec, "memory_limit_mib": self.memory_limit_mib, "sys_path": sys.path,
                  "fds": inherited}
        try:
            self.child = subprocess.Popen([sys.executable, "-c", BOOTSTRAP, json.dumps(config)],
                                          stdin=subprocess.DEVNULL, stdout=output[1], stderr=output[1],
                                          pass_fds=inherited, start_new_session=True)
        finally:
            for fd in (*inherited, output[1]):
                os.close(fd)
        self.to_child, self.from_child = to_child[1], from_child[0]
        os.set_blocking(self.to_child, False)
        os.set_blocking(self.from_child, False)
        self.pidfd = os.pidfd_open(self.child.pid) if hasattr(os, "pidfd_open") else None
        # lifeline[1] is never written: the watchdog's read of it ends when the runner has gone
        self.fds = [self.to_child, self.from_child, lifeline[1]] + ([self.pidfd] if self.pidfd is not None else [])
        self.tail = _Tail(output[0])
        header, _ = self._receive(time.monotonic() + START_TIMEOUT_S, starting=True)
        if header.get("kind") == "isolation failed":
            self.close()
            raise IsolationFailed(f"the suite could not isolate the backend: {header.get('message')}")
        if header.get("kind") != "ready":
            self.close()
            raise RuntimeError(f"the backend's process could not load {self.spec!r}: {header.get('message')}")

    def _send(self, header: dict[str, Any], buffers: list, deadline: float) -> None:
        for chunk in _frame(header, buffers):
            view = memoryview(chunk).cast("B")
            while view:
                self._wait(self.to_child, select.POLLOUT, deadline)
                try:
                    view = view[os.write(self.to_child, view):]
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    raise BackendCrashed(self._death(), self.tail.take()) from None

    def _receive(self, deadline: float, starting: bool = False) -> tuple[dict, list[memoryview]]:
        """The child's next answer; raises BackendCrashed, BackendTimedOut or BackendGarbage."""
        data, needed = bytearray(), PREFIX.size
        while len(data) < needed:
            try:
                chunk = os.read(self.from_child, min(needed - len(data), 2**20))
            except BlockingIOError:
                self._wait(self.from_child, select.POLLIN, deadline, starting)
                continue
            if not chunk:  # every writer closed: the process is gone, or closed its end
                raise BackendCrashed(self._death(), self.tail.take())
            data += chunk
            if needed == PREFIX.size and len(data) == needed:
                length, header_length = PREFIX.unpack(data)
                if header_length > min(length, HEADER_LIMIT_BYTES) or length > HEADER_LIMIT_BYTES + ANSWER_LIMIT_BYTES:
                    raise BackendGarbage(f"the backend's process wrote {length} bytes of something else "
                                         "than an answer to the runner's pipe")
                needed += length
        payload = memoryview(data)[PREFIX.size:]
        header_length = PREFIX.unpack_from(data)[1]
        try:
            header = json.loads(bytes(payload[:header_length]))
            sizes = [int(n) for n in header["buffers"]]
        except (ValueError, TypeError, KeyError) as e:
            raise BackendGarbage(f"the backend's process wrote an unreadable answer ({type(e).__name__})") from None
        if not isinstance(header, dict) or min(sizes, default=0) < 0 or sum(sizes) != len(payload) - header_length:
            raise BackendGarbage("the backend's process wrote an answer whose sizes do not add up")
        offsets = np.cumsum([header_length, *sizes]).tolist()
        return header, [payload[a:b] for a, b in zip(offsets, offsets[1:])]

    def _outputs(self, header: dict, buffers: list[memoryview]) -> list[np.ndarray]:
        described = header.get("outputs")
        if not isinstance(described, list) or len(described) != len(buffers):
            raise BackendGarbage("the backend's process answered outputs without their descriptions")
        outputs = []
        for index, (output, data) in enumerate(zip(described, buffers)):
            dtype = dtype_from_text(output.get("dtype") if isinstance(output, dict) else None)
            shape = output.get("shape") if isinstance(output, dict) else None
            if (dtype is None or not isinstance(shape, list) or len(shape) > 64
                    or not all(isinstance(n, int) and n >= 0 for n in shape)
                    or int(np.prod(shape, dtype=object)) * dtype.itemsize != len(data)):
                raise BackendGarbage(f"the backend's process described output {index} inconsistently")
            outputs.append(_array(output["dtype"], shape, data))
        return outputs

    def _wait(self, fd: int, event: int, deadline: float, starting: bool = False) -> None:
        """Until ``fd`` is ready; raises BackendCrashed when the child exits first (whoever else
        holds the pipe) and BackendTimedOut at the deadline, killing the process group."""
        poller = select.poll()
        poller.register(fd, event)
        if self.pidfd is not None:
            poller.register(self.pidfd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                output = self.tail.take()
                if starting:
                    raise BackendTimedOut(f"the backend's process did not start within {START_TIMEOUT_S} s", output)
                raise BackendTimedOut(f"no answer within {self.timeout_s:g} s; the backend's process was killed", output)
            wait_s = remaining if self.pidfd is not None else min(remaining, POLL_S)
            ready: dict[int | None, int] = dict(poller.poll(wait_s * 1000))
            if ready.get(fd):
                return
            if ready.get(self.pidfd) or (self.pidfd is None and self.child.poll() is not None):
                if select.select([fd], [], [], 0)[0] and event == select.POLLIN:
                    return  # it wrote before it died: read that first
                message = self._death()
                raise BackendCrashed(f"{message} while starting" if starting else message, self.tail.take())

    def _death(self) -> str:
        try:
            code = self.child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the backend's process closed its end of the channel"
        if code < 0:
            try:
                return f"the backend's process was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"the backend's process was killed by signal {-code}"
        return f"the backend's process exited with status {code}"


class _Tail(threading.Thread):
    """Reads the backend's stdout and stderr as they come, keeping only their last bytes."""

    def __init__(self, fd: int):
        super().__init__(daemon=True, name="conformance backend output")
        self.fd, self.kept, self.lock = fd, b"", threading.Lock()
        self.start()

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                with self.lock:
                    self.kept = (self.kept + chunk)[-TAIL_BYTES:]
        finally:
            os.close(self.fd)

    def clear(self) -> None:
        with self.lock:
            self.kept = b""

    def take(self) -> str:
        """What came since the last clear, at most the last 20 lines of it (once the process is
        gone or given up on)."""
        self.join(timeout=0.05)  # what a dying process wrote last may still be in the pipe
        with self.lock:
            kept, self.kept = self.kept, b""
        return "\n".join(kept.decode("utf-8", "replace").splitlines()[-20:])


def _frame(header: dict[str, Any], buffers: list) -> list:
    """One message: prefix, JSON header (with the buffers' sizes), then the buffers themselves."""
    views = [memoryview(b).cast("B") for b in buffers]
    head = json.dumps(dict(header, buffers=[v.nbytes for v in views])).encode()
    return [PREFIX.pack(len(head) + sum(v.nbytes for v in views), len(head)), head, *views]


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
        except BaseException as e:  # noqa: BLE001 - everything the backend raises is a result
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


def serve(config: dict[str, Any]) -> None:
    """The child: load the backend, then answer one request at a time until the runner goes."""
    global IN_CHILD
    IN_CHILD = True
    reader, writer, lifeline = config["fds"]
    _watchdog(lifeline, (reader, writer))
    if config["memory_limit_mib"]:
        import resource

        limit = config["memory_limit_mib"] * 2**20
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError) as e:
            _answer(writer, {"kind": "isolation failed", "message": f"cannot set the memory limit "
                                                                     f"{config['memory_limit_mib']} MiB: {e}"})
            return
    from . import load_backend

    try:
        backend = load_backend(config["spec"])
    except BaseException as e:  # noqa: BLE001 - reported to the runner
        _answer(writer, {"kind": "failed", "message": describe(e)[2].splitlines()[0]})
        return
    try:
        _answer(writer, {"kind": "ready"})
        while (request := _read_frame(reader)) is not None:
            _answer(writer, *_respond(backend, *request))
    except OSError as e:  # the backend closed or broke the channel: one line for its last output
        with contextlib.suppress(OSError):
            os.write(2, f"conformance: the runner's channel broke ({describe(e)[2].splitlines()[0]})\n".encode())
        os._exit(1)


def _respond(backend, header: dict[str, Any], buffers: list[memoryview]) -> tuple[dict[str, Any], list]:
    model_bytes, *data = buffers
    inputs = {i["name"]: _array(i["dtype"], i["shape"], d) for i, d in zip(header["inputs"], data)}
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
    """Fork a process that kills this process group once the runner's end of ``lifeline``
    closes, which happens however the runner ends."""
    if os.fork() == 0:
        try:
            for fd in channel:
                os.close(fd)
            while os.read(lifeline, 1):
                pass
        finally:
            os.killpg(0, signal.SIGKILL)
    os.close(lifeline)


def _answer(fd: int, header: dict[str, Any], buffers: Sequence = ()) -> None:
    for chunk in _frame(header, list(buffers)):
        view = memoryview(chunk).cast("B")
        while view:
            view = view[os.write(fd, view):]


def _read_frame(fd: int) -> tuple[dict, list[memoryview]] | None:
    prefix = _read_exactly(fd, PREFIX.size)
    if prefix is None:
        return None
    length, header_length = PREFIX.unpack(prefix)
    payload = memoryview(_read_exactly(fd, length) or b"")
    header = json.loads(bytes(payload[:header_length]))
    offsets = np.cumsum([header_length, *header["buffers"]]).tolist()
    return header, [payload[a:b] for a, b in zip(offsets, offsets[1:])]


def _read_exactly(fd: int, size: int) -> bytearray | None:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, min(size - len(data), 2**20))
        if not chunk:
            return None
        data += chunk
    return data

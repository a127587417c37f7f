"""The runner: the parent's side of process isolation. It starts the child, sends it each item,
waits on its process as well as its pipe, and turns a death, a silence or garbage into the
errors the judge reads (a crash, a timeout, garbage); a fresh child serves the next item."""

from __future__ import annotations

import itertools
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import time
from typing import Any, Sequence

import numpy as np
import onnx

from ..base import Backend, Unsupported
from .reaping import TOKEN_VARIABLE, kill_family
from .errors import BackendCrashed, BackendGarbage, BackendTimedOut, IsolationFailed, RaisedInBackend
from .wire import (ANSWER_LIMIT_BYTES, HEADER_LIMIT_BYTES, PREFIX, WRITEV_CHUNKS, dtype_from_text, dtype_text, frame_chunks,
                   plain_array, unwritten)

START_TIMEOUT_S = 120
TAIL_BYTES = 4096  # of the backend's stdout and stderr, kept for a crash's details
POLL_S = 0.05  # without pidfd (not Linux): how often a silent child is checked for life
BOOTSTRAP = ("import json, sys; config = json.loads(sys.argv[1]); sys.path[:] = config['sys_path']; "
             "from conformance.backends.isolation.child import serve; serve(config)")


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


def started(spec: str, timeout_s: float, memory_limit_mib: int | None) -> tuple[Backend, "IsolatedBackend"]:
    """The backend ``spec`` loaded in this process (for its name, version and details) and its
    isolated runner, whose child starts first: both import the runtime at once."""
    runner = IsolatedBackend(spec, "?", "?", timeout_s, memory_limit_mib)
    runner.start()
    try:
        from .. import load_backend

        backend = load_backend(spec)
    except BaseException:
        runner.close()
        raise
    runner.name, runner.version = backend.name, backend.version
    return backend, runner


class IsolatedBackend:
    """Forwards ``run`` to a child process that loads the backend named ``spec``."""

    def __init__(self, spec: str, name: str, version: str, timeout_s: float, memory_limit_mib: int | None):
        self.spec, self.name, self.version = spec, name, version
        self.timeout_s = timeout_s
        self.memory_limit_mib, self.memory_note = effective_memory_limit(memory_limit_mib)
        self.child: Any = None  # the subprocess.Popen, once started
        self.ready = False  # whether the child said it has loaded the backend

    def details(self) -> dict[str, str]:
        limit = f"{self.memory_limit_mib} MiB" if self.memory_limit_mib else "none"
        return {"isolation": f"child process, timeout {self.timeout_s:g} s, memory limit {limit}{self.memory_note}"}

    def start(self) -> None:
        """Start the child now, without waiting for it: its imports overlap whatever this process
        does next (loading the backend here too, collecting the items). The first run() waits
        until it is ready; a child that cannot start says so there."""
        if self.child is None:
            self._spawn()

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        if self.child is not None and self.ready and self.child.poll() is not None:
            message, output = self._death(), self.tail.take()  # e.g. a thread the backend left running
            self.close()
            raise BackendCrashed(f"{message}, after it answered the previous item", output)
        try:
            if self.child is None:
                self._spawn()
            if not self.ready:
                self._await_ready()
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
        """Kill the child and all it started: its process group (the watchdog among them), its
        session and its descendants (``reaping``)."""
        if self.child is None:
            return
        kill_family(self.child.pid, self.token)
        self.child.wait()
        for fd in self.fds:
            os.close(fd)
        self.child = None

    def _spawn(self) -> None:
        to_child, from_child, lifeline, output = os.pipe(), os.pipe(), os.pipe(), os.pipe()
        for channel in (to_child, from_child):
            _widen(channel[0])
        inherited = (to_child[0], from_child[1], lifeline[0])
        config = {"spec": self.spec, "memory_limit_mib": self.memory_limit_mib, "sys_path": sys.path,
                  "fds": inherited}
        try:
            self.token = secrets.token_hex(16)  # inherited by all the child starts (reaping)
            self.child = subprocess.Popen([sys.executable, "-c", BOOTSTRAP, json.dumps(config)],
                                          stdin=subprocess.DEVNULL, stdout=output[1], stderr=output[1],
                                          pass_fds=inherited, start_new_session=True,
                                          env={**os.environ, TOKEN_VARIABLE: self.token})
        finally:
            for fd in (*inherited, output[1]):
                os.close(fd)
        self.to_child, self.from_child = to_child[1], from_child[0]
        os.set_blocking(self.to_child, False)
        os.set_blocking(self.from_child, False)
        self.pidfd = os.pidfd_open(self.child.pid) if hasattr(os, "pidfd_open") else None
        # lifeline[1] is never written: the watchdog's read of it ends when the runner has gone
        self.fds = [self.to_child, self.from_child, lifeline[1], output[0]] + ([self.pidfd] if self.pidfd is not None else [])
        self.tail = _Tail(output[0])
        self.ready = False

    def _await_ready(self) -> None:
        header, _ = self._receive(time.monotonic() + START_TIMEOUT_S, starting=True)
        if header.get("kind") == "isolation failed":
            self.close()
            raise IsolationFailed(f"the suite could not isolate the backend: {header.get('message')}")
        if header.get("kind") != "ready":
            self.close()
            raise RuntimeError(f"the backend's process could not load {self.spec!r}: {header.get('message')}")
        self.ready = True

    def _send(self, header: dict[str, Any], buffers: list, deadline: float) -> None:
        chunks = frame_chunks(header, buffers)
        while chunks:
            try:
                chunks = unwritten(chunks, os.writev(self.to_child, chunks[:WRITEV_CHUNKS]))
            except BlockingIOError:  # the pipe is full: until the child reads, dies or runs out of time
                self._wait(self.to_child, select.POLLOUT, deadline)
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
                raise BackendCrashed(self._death() + (" while starting" if starting else ""), self.tail.take())
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
        offsets = list(itertools.accumulate([header_length, *sizes]))
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
            outputs.append(plain_array(output["dtype"], shape, data))
        return outputs

    def _wait(self, fd: int, event: int, deadline: float, starting: bool = False) -> None:
        """Until ``fd`` is ready; raises BackendCrashed when the child exits first (whoever else
        holds the pipe) and BackendTimedOut at the deadline, killing the process group. Meanwhile
        the backend's output is read as it comes: a chatty backend never blocks on a full pipe."""
        poller = select.poll()
        poller.register(fd, event)
        if self.pidfd is not None:
            poller.register(self.pidfd, select.POLLIN)
        if not self.tail.ended:
            poller.register(self.tail.fd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                output = self.tail.take()
                if starting:
                    raise BackendTimedOut(f"the backend's process did not start within {START_TIMEOUT_S} s", output)
                raise BackendTimedOut(f"no answer within {self.timeout_s:g} s; the backend's process was killed", output)
            wait_s = remaining if self.pidfd is not None else min(remaining, POLL_S)
            ready: dict[int | None, int] = dict(poller.poll(wait_s * 1000))
            if ready.get(self.tail.fd):
                self.tail.read()
                if self.tail.ended:  # every writer closed it: poll would report that again and again
                    poller.unregister(self.tail.fd)
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


def _widen(fd: int) -> None:
    """Give a pipe the largest buffer this system allows an unprivileged process (Linux: 1 MiB
    by default, against 64 KiB): an item's model and inputs then cross in a few writes, where
    each 64 KiB would cost the runner and the child a wakeup. Elsewhere, or refused, the pipe
    stays as it is."""
    try:
        import fcntl

        with open("/proc/sys/fs/pipe-max-size", "rb") as limit:
            size = int(limit.read(32))
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)  # Linux only
    except (ImportError, AttributeError, OSError, ValueError):
        pass


class _Tail:
    """The backend's stdout and stderr, keeping only their last bytes. The runner reads them
    whenever it waits on the child, and once more when it takes them: the child writes its output
    before its answer (or dies after it), so when the answer or the death is seen, all of that
    output is already in the pipe, and reading what is there takes no waiting."""

    def __init__(self, fd: int):
        os.set_blocking(fd, False)
        self.fd, self.kept, self.ended = fd, b"", False

    def read(self) -> None:
        """All that is in the pipe now."""
        while not self.ended:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            self.ended = not chunk
            self.kept = (self.kept + chunk)[-TAIL_BYTES:]

    def clear(self) -> None:
        self.read()
        self.kept = b""

    def take(self) -> str:
        """What came since the last clear, at most the last 20 lines of it."""
        self.read()
        kept, self.kept = self.kept, b""
        return "\n".join(kept.decode("utf-8", "replace").splitlines()[-20:])

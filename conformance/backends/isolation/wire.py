"""What crosses between the runner and the child: frames (a length prefix, a JSON header with
the buffers' sizes, the raw buffers), element types as text, answers as plain arrays, exceptions
as their description, and the limits on all of these. The ort-js adapter frames its Node server's
messages the same way."""

from __future__ import annotations

import functools
import itertools
import json
import os
import struct
import subprocess
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from .errors import BackendGarbage

ANSWER_LIMIT_BYTES = 2**30  # a larger answer is garbage: the runner does not read it
HEADER_LIMIT_BYTES = 2**20
MESSAGE_LIMIT = 2000  # characters of an exception's text that cross back
WRITEV_CHUNKS = 512  # per os.writev call; POSIX systems take at least 1024 (IOV_MAX)
PREFIX = struct.Struct("<QI")  # a frame's length (after the prefix) and its JSON header's length


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
    return _dtype_named(text) if isinstance(text, str) else None


@functools.lru_cache(maxsize=64)  # a few names, met on every output of every item
def _dtype_named(text: str) -> np.dtype | None:
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
    return [plain_array(text, shape, bytearray(data)) for text, shape, data in plain_outputs(outputs)]


def plain_array(text: str, shape: Sequence[int], data: bytearray | memoryview) -> np.ndarray:
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


def frame(header: dict[str, Any], buffers: list) -> list:
    """One message: prefix, JSON header (with the buffers' sizes), then the buffers themselves."""
    views = [memoryview(b).cast("B") for b in buffers]
    head = json.dumps(dict(header, buffers=[v.nbytes for v in views])).encode()
    return [PREFIX.pack(len(head) + sum(v.nbytes for v in views), len(head)), head, *views]


def write_frame(fd: int, header: dict[str, Any], buffers: Sequence = ()) -> None:
    """One message, written whole to a blocking ``fd``."""
    chunks = frame_chunks(header, list(buffers))
    while chunks:
        chunks = unwritten(chunks, os.writev(fd, chunks[:WRITEV_CHUNKS]))


def frame_chunks(header: dict[str, Any], buffers: list) -> list[memoryview]:
    """A frame as the byte views one ``os.writev`` takes: the reader then wakes once for the
    message, where a write per part could wake it for each."""
    return [view for view in (memoryview(chunk).cast("B") for chunk in frame(header, buffers)) if view.nbytes]


def unwritten(chunks: list[memoryview], written: int) -> list[memoryview]:
    """What is left of ``chunks`` once their first ``written`` bytes are written."""
    while written:
        if written < chunks[0].nbytes:
            return [chunks[0][written:], *chunks[1:]]
        written -= chunks[0].nbytes
        chunks = chunks[1:]
    return chunks


def read_frame(fd: int) -> tuple[dict, list[memoryview]] | None:
    """The next message on a blocking ``fd`` (header, buffers), or None once its writer has gone."""
    prefix = _read_exactly(fd, PREFIX.size)
    if prefix is None:
        return None
    length, header_length = PREFIX.unpack(prefix)
    payload = memoryview(_read_exactly(fd, length) or b"")
    header = json.loads(bytes(payload[:header_length]))
    offsets = list(itertools.accumulate([header_length, *header["buffers"]]))
    return header, [payload[a:b] for a, b in zip(offsets, offsets[1:])]


def _read_exactly(fd: int, size: int) -> bytearray | None:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, min(size - len(data), 2**20))
        if not chunk:
            return None
        data += chunk
    return data

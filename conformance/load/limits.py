"""Budgets for reading untrusted case files: a case directory may hold anything, and a file that
names a FIFO, a device, an alias bomb or a 500,000-tap kernel must cost one error line, not the
machine. Each limit is far above what the bundled cases need and can be raised with
``--conformance-limit NAME=VALUE`` (pytest) for those who need bigger.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


# Where a field sits in a YAML document: keys and list indices from the top, e.g. ("cases", 3, "attributes")
FieldPath = tuple[Any, ...]


def format_path(path: FieldPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


@dataclass(frozen=True)
class Limits:
    file_bytes: int = 2**20  # a case file or registry (the largest bundled one is 27 KB)
    yaml_depth: int = 64  # nesting of YAML collections
    yaml_nodes: int = 200_000  # YAML nodes of a file, every alias expanded
    instances: int = 10_000  # rows of one case's parameter design (pairs, for pairwise)
    instance_nodes: int = 2_000_000  # YAML nodes of one case's instances together
    rank: int = 32  # dimensions of a tensor
    elements: int = 2**24  # elements of one input or output tensor
    taps: int = 2**16  # elements of one pooling window (the kernel's product)
    work: int = 2**30  # window taps times output elements, per item

    def exceeded(self, name: str, value: int, what: str) -> str:
        """The message for ``value`` ``what`` (e.g. "70 levels of nesting"), over the limit ``name``."""
        return f"{value:,} {what}, over the limit {name}={getattr(self, name)} (--conformance-limit {name}=N raises it)"


DEFAULT_LIMITS = Limits()
NAMES = tuple(f.name for f in dataclasses.fields(Limits))


def parse_limits(settings: list[str] | None) -> Limits:
    """``["taps=1000000", ...]`` -> Limits; ValueError with a one-line reason."""
    values = {}
    for setting in settings or ():
        name, _, value = setting.partition("=")
        if name not in NAMES:
            raise ValueError(f"--conformance-limit {setting}: no limit {name!r} (limits: {', '.join(NAMES)})")
        try:
            values[name] = int(value.replace("_", ""))
        except ValueError:
            raise ValueError(f"--conformance-limit {setting}: {value!r} is not an integer") from None
        if values[name] < 1:
            raise ValueError(f"--conformance-limit {setting}: a limit is a positive integer")
    return Limits(**values)


class ReadRefused(Exception):
    """A file that must not be read, or that breaks a limit: (line, field, message)."""

    def __init__(self, line: int, field: str, message: str):
        super().__init__(message)
        self.line, self.field, self.message = line, field, message


_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def read_text(file: Path, limits: Limits) -> str:
    """The file's UTF-8 text: regular files only (a FIFO would block, a device never end), at
    most ``limits.file_bytes``."""
    data = read_regular(file, limits.file_bytes, "file_bytes", limits)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ReadRefused(line, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_regular(file: Path, max_bytes: int, limit_name: str | None = None, limits: Limits = DEFAULT_LIMITS,
                 follow_links: bool = True) -> bytes:
    """The bytes of ``file`` if it is a regular file of at most ``max_bytes``: opening never
    waits (a FIFO) and reading stops past the bound (a device, a file that grows), so any path
    costs bounded time and memory. ReadRefused otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_links else os.O_NOFOLLOW)
    try:
        _refuse_unless_regular((os.stat if follow_links else os.lstat)(file).st_mode)  # a socket cannot be opened
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        descriptor = os.open(file, flags)
    except OSError as e:
        raise ReadRefused(1, "", f"cannot be read: {e.strerror}") from None
    try:
        _refuse_unless_regular(os.fstat(descriptor).st_mode)  # what was opened, whatever changed since
        data = os.read(descriptor, max_bytes + 1)
        while len(data) <= max_bytes and (chunk := os.read(descriptor, max_bytes + 1 - len(data))):
            data += chunk
    except OSError as e:
        raise ReadRefused(1, "", f"cannot be read: {e.strerror}") from None
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:
        raise ReadRefused(1, "", limits.exceeded(limit_name, len(data), "bytes or more") if limit_name
                          else f"over {max_bytes:,} bytes")
    return data


def read_state_text(file: Path, max_bytes: int) -> str:
    """A file the suite wrote and reads back (a lock, a results.json): UTF-8 text of a regular
    file within ``max_bytes``, or ReadRefused whose message names the file, in one line."""
    try:
        return read_regular(file, max_bytes).decode("utf-8")
    except ReadRefused as e:
        raise ReadRefused(1, "", f"{file}: {e.message.removeprefix('cannot be read: ')}") from None
    except UnicodeDecodeError as e:
        raise ReadRefused(1, "", f"{file}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _refuse_unless_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise ReadRefused(1, "", f"is not a regular file but {_KINDS.get(stat.S_IFMT(mode), 'something else')}")


# libyaml's parser, where PyYAML has it, walks the events ten times faster than the pure-Python one.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A plain scalar that YAML reads as a number but that no element type can hold exactly.
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
# PyYAML's implicit integers (decimal, 0x, 0b, 0o-style and base 60), here only when too long to
# fit any element type: their value is never built (a huge one cannot even be printed).
_LONG_INTEGER = re.compile(r"^[-+]?(0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*|[1-9][0-9_]*(:[0-5]?[0-9])+)$")
_LONGEST_INTEGER = 40  # characters: 2**64 has 20 digits
_FLOAT = re.compile(r"^[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?$")  # PyYAML's: 1.0e5 is a string
_INFINITY = re.compile(r"^[-+]?\.(inf|Inf|INF)$")


def check_structure(text: str, limits: Limits) -> None:
    """Walk the YAML events (no recursion, nothing built) and refuse, before anything is
    composed: nesting deeper than ``yaml_depth``, more than ``yaml_nodes`` nodes once every alias
    is expanded (a billion-laughs bomb), and numbers that overflow every type. Where libyaml
    stops at an error, PyYAML's own parser walks again: what it accepts, its composer builds."""
    for loader in dict.fromkeys((_FAST_LOADER, yaml.SafeLoader)):
        try:
            _walk(text, limits, loader)
            return
        except yaml.YAMLError:
            continue  # with PyYAML's parser too: the composer reports it, with its line


def _walk(text: str, limits: Limits, loader: type) -> None:
    expanded = 0
    anchored: dict[str | None, int] = {}  # anchor -> nodes of its value, aliases expanded
    open_: list[_Open] = []
    path: list = []  # the key or index of the current child of each open collection

    def where(event: yaml.Event) -> tuple[int, str]:
        mark: Any = event.start_mark  # a parser's event always has its mark
        return mark.line + 1, format_path(tuple(p for p in path if p is not None))

    def place(event: yaml.NodeEvent) -> bool:
        """Enter the node in its parent; whether it is a mapping key."""
        if not open_:
            return False
        top = open_[-1]
        if top.mapping:
            top.after_key = not top.after_key
            if top.after_key:
                path[-1] = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                return True
            return False
        top.index += 1
        path[-1] = top.index
        return False

    def count(nodes: int, event: yaml.Event) -> None:
        nonlocal expanded
        expanded += nodes
        if expanded > limits.yaml_nodes:
            raise ReadRefused(*where(event), limits.exceeded(
                "yaml_nodes", expanded, "YAML nodes or more with the aliases expanded"))

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            place(event)
            count(1, event)
            open_.append(_Open(event.anchor, expanded - 1, isinstance(event, yaml.MappingStartEvent)))
            if len(open_) > limits.yaml_depth:
                raise ReadRefused(*where(event), limits.exceeded("yaml_depth", len(open_), "levels of nesting"))
            path.append(None)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            closed = open_.pop()
            path.pop()
            if closed.anchor is not None:
                anchored[closed.anchor] = expanded - closed.before
        elif isinstance(event, yaml.ScalarEvent):
            is_key = place(event)
            count(1, event)
            if event.anchor is not None:
                anchored[event.anchor] = 1
            if not is_key and (event.implicit[0] or event.tag in _NUMBER_TAGS):
                _check_number(event, *where(event))
        elif isinstance(event, yaml.AliasEvent):
            place(event)
            count(anchored.get(event.anchor, 1), event)


@dataclass
class _Open:
    """A collection whose end event has not come yet."""

    anchor: str | None
    before: int  # expanded nodes before it
    mapping: bool
    index: int = -1  # of the current item, in a sequence
    after_key: bool = False  # in a mapping: whether the last node was a key (each node toggles it)


def _check_number(event: yaml.ScalarEvent, line: int, field: str) -> None:
    value = event.value
    if len(value) >= _LONGEST_INTEGER and _LONG_INTEGER.match(value):
        raise ReadRefused(line, field, f"an integer literal of {len(value):,} characters: no element type or attribute holds it")
    if (_FLOAT.match(value) or event.tag == _NUMBER_TAGS[1]) and not _INFINITY.match(value):
        try:
            infinite = math.isinf(float(value.replace("_", "")))
        except ValueError:
            return  # not a number: the schema says what it should be
        if infinite:
            raise ReadRefused(line, field, f"{value} overflows float64: write .inf or -.inf for an infinity")

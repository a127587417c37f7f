"""The expansion cache's file format: JSON that can only describe the suite's own item types.

A cache file is input like any other (a restored CI cache, a committed ``.pytest_cache``), so it
is never unpickled: it is a JSON list of entries, each built from earlier ones only, so reading
it needs no recursion and a planted file cannot nest deeply. An entry is ``[tag, payload]``:

- ``["list" | "tuple", [value, ...]]`` and ``["dict", [[key, value], ...]]``;
- ``["array", [element type, shape, base64 bytes]]`` for a numpy array of a known element type;
- ``["path", text]``; ``["dtype", name]`` and ``["op", [domain, name, version]]``, taken from the
  suite's own tables rather than rebuilt;
- ``[class name, {field: value}]`` for one of the dataclasses in ``CLASSES``, whose every field is
  checked against its annotation.

A value inside an entry is ``null``, a boolean, a number, ``["s", text]`` (a string),
``["f", hex]`` (a NaN, by its 8 bytes: its sign is data) or ``["r", index]`` (an earlier entry); the last entry is the whole. Anything else, in any part, is
``CacheCorrupt``: the caller then recomputes.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import json
import struct
import types
import typing
from pathlib import Path, PurePath
from typing import Any, Callable, Union

import numpy as np

from ..load.cases import Ambiguity, Case, InputSpec, OutputSpec, Source, Upstream
from ..load.dtypes import DTYPES, DType
from ..load.operators import OpVersion, operators
from .items import Item, ItemInput, ItemOutput

CLASSES = {cls.__name__: cls for cls in (Item, ItemInput, ItemOutput, Case, Source, InputSpec, OutputSpec,
                                         Upstream, Ambiguity)}
MAX_DEPTH = 64  # the suite's own items nest about 12 deep
ARRAY_TYPES = {d.numpy.name: d.numpy for d in DTYPES.values()} | {"bool": np.dtype(bool)}


class CacheCorrupt(ValueError):
    """A cache file that the suite did not write as it is."""


def dumps(value: Any) -> bytes:
    return json.dumps(encode(value), separators=(",", ":"), allow_nan=True).encode()


def encode(value: Any) -> list:
    """``value`` as the list of entries that ``dumps`` writes as JSON (a file may hold several)."""
    entries: list = []
    index: dict[int, int] = {}
    keep: list = []  # the encoded objects stay alive, so that no id() is reused while encoding
    root = _encode(value, entries, index, keep)
    entries.append(["tuple", [root]])
    return entries


def _encode(value: Any, entries: list, index: dict[int, int], keep: list) -> Any:
    if type(value) is float and value != value:  # JSON's NaN has no sign or payload: its 8 bytes do
        return ["f", struct.pack(">d", value).hex()]
    if value is None or type(value) in (bool, int, float):
        return value
    if type(value) is str:
        return ["s", value]
    if id(value) in index:
        return ["r", index[id(value)]]
    entry = _entry(value, entries, index, keep)
    keep.append(value)
    index[id(value)] = len(entries)
    entries.append(entry)
    return ["r", index[id(value)]]


def _entry(value: Any, entries: list, index: dict[int, int], keep: list) -> list:
    def encode(v: Any) -> Any:
        return _encode(v, entries, index, keep)

    if type(value) in (list, tuple):
        return [type(value).__name__, [encode(v) for v in value]]
    if type(value) is dict:
        return ["dict", [[encode(k), encode(v)] for k, v in value.items()]]
    if isinstance(value, np.ndarray) and value.dtype.name in ARRAY_TYPES:
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
        return ["array", [value.dtype.name, list(value.shape), data]]
    if isinstance(value, PurePath):
        return ["path", str(value)]
    if isinstance(value, DType):
        return ["dtype", value.name]
    if isinstance(value, OpVersion):
        return ["op", [value.domain, value.op, value.version]]
    if type(value).__name__ in CLASSES and type(value) is CLASSES[type(value).__name__]:
        return [type(value).__name__, {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}]
    raise TypeError(f"the expansion cache cannot hold a {type(value).__name__}")


def loads(data: bytes) -> Any:
    """The value ``data`` holds, or CacheCorrupt."""
    try:
        entries = json.loads(data)
    except (ValueError, RecursionError) as e:  # includes UnicodeDecodeError and 5,000-digit integers
        raise CacheCorrupt(f"not the cache's JSON: {type(e).__name__}") from None
    return decode(entries)


def decode(entries: Any) -> Any:
    """The value a list of entries (as parsed from JSON) holds, or CacheCorrupt."""
    if not isinstance(entries, list) or not entries:
        raise CacheCorrupt("not a list of entries")
    decoder = _Decoder()
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise CacheCorrupt(f"entry {len(decoder.decoded)} is not [tag, payload]")
        decoder.add(entry[0], entry[1])
    root = decoder.decoded[-1]
    if not (isinstance(root, tuple) and len(root) == 1):
        raise CacheCorrupt("the last entry is not the whole")
    return root[0]


class _Decoder:
    def __init__(self) -> None:
        self.decoded: list = []
        self.depths: list[int] = []  # how deep each entry's references go: a chain of them nests too
        self.depth = 0  # of the entry being decoded

    def add(self, tag: str, payload: Any) -> None:
        self.depth = 1
        value = self._entry(tag, payload)
        if self.depth > MAX_DEPTH:
            raise CacheCorrupt(f"entry {len(self.decoded)} nests deeper than {MAX_DEPTH}")
        self.decoded.append(value)
        self.depths.append(self.depth)

    def value(self, v: Any) -> Any:
        if v is None or type(v) in (bool, int, float):
            return v
        if isinstance(v, list) and len(v) == 2:
            if v[0] == "s" and type(v[1]) is str:
                return v[1]
            if v[0] == "f" and type(v[1]) is str and len(v[1]) == 16:
                with contextlib.suppress(ValueError):
                    return struct.unpack(">d", bytes.fromhex(v[1]))[0]
            if v[0] == "r" and type(v[1]) is int and 0 <= v[1] < len(self.decoded):
                self.depth = max(self.depth, self.depths[v[1]] + 1)
                return self.decoded[v[1]]
        raise CacheCorrupt(f"entry {len(self.decoded)}: {str(v)[:40]} is not a value")

    def _entry(self, tag: str, payload: Any) -> Any:
        number = len(self.decoded)
        if tag in ("list", "tuple") and isinstance(payload, list):
            values = [self.value(v) for v in payload]
            return values if tag == "list" else tuple(values)
        if tag == "dict" and isinstance(payload, list) and all(isinstance(p, list) and len(p) == 2 for p in payload):
            try:
                return {self.value(k): self.value(v) for k, v in payload}
            except TypeError:  # an unhashable key
                raise CacheCorrupt(f"entry {number}: a key cannot be a dictionary's") from None
        if tag == "array":
            return _array(payload, number)
        if tag == "path" and type(payload) is str:
            return Path(payload)
        if tag == "dtype" and type(payload) is str and payload in DTYPES:
            return DTYPES[payload]
        if tag == "op":
            return _op_version(payload, number)
        if tag in CLASSES and isinstance(payload, dict):
            return _instance(CLASSES[tag], {k: self.value(v) for k, v in payload.items()}, number)
        raise CacheCorrupt(f"entry {number}: unknown {tag[:40]!r} or a malformed payload")


def _array(payload: Any, number: int) -> np.ndarray:
    try:
        name, shape, text = payload
        dtype = ARRAY_TYPES[name]
        if not all(type(n) is int and n >= 0 for n in shape):
            raise ValueError
        raw = base64.b64decode(text, validate=True)
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    except (ValueError, TypeError, KeyError):
        raise CacheCorrupt(f"entry {number}: not an array") from None


def _op_version(payload: Any, number: int) -> OpVersion:
    try:
        domain, op, version = payload
        return operators()[domain, op].versions[version]
    except (ValueError, TypeError, KeyError):
        raise CacheCorrupt(f"entry {number}: no such operator version") from None


def _instance(cls: type, fields: dict[str, Any], number: int) -> Any:
    """An instance of ``cls`` whose fields all match their annotations; built without
    ``__init__``, as the value it was when written (a frozen dataclass validates nothing more)."""
    checks, names = _fields(cls)
    if sorted(fields) != sorted(names):
        raise CacheCorrupt(f"entry {number}: the fields of {cls.__name__} are not {names}")
    instance: Any = object.__new__(cls)
    for name in names:
        if not checks[name](fields[name]):
            raise CacheCorrupt(f"entry {number}: {cls.__name__}.{name} has another type than its annotation")
        object.__setattr__(instance, name, fields[name])
    return instance


@functools.cache
def _fields(cls: type) -> tuple[dict[str, Callable[[Any], bool]], list[str]]:
    hints = typing.get_type_hints(cls)
    return {name: checker(hint) for name, hint in hints.items()}, [f.name for f in dataclasses.fields(cls)]


def checker(hint: Any) -> Callable[[Any], bool]:
    """A test of whether a value has the type ``hint`` names, to the depth the annotations go."""
    if hint is Any:
        return lambda value: True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        options = [checker(arg) for arg in args]
        return lambda value: any(check(value) for check in options)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        each = checker(args[0])
        return lambda value: isinstance(value, tuple) and all(each(v) for v in value)
    if origin is tuple:
        fixed = [checker(arg) for arg in args]
        return lambda value: (isinstance(value, tuple) and len(value) == len(fixed)
                              and all(check(v) for check, v in zip(fixed, value)))
    if origin is list:
        each = checker(args[0])
        return lambda value: isinstance(value, list) and all(each(v) for v in value)
    if origin is dict:
        key, item = checker(args[0]), checker(args[1])
        return lambda value: isinstance(value, dict) and all(key(k) and item(v) for k, v in value.items())
    if hint is float:
        return lambda value: type(value) in (int, float)
    if hint is int:
        return lambda value: type(value) is int
    kind = origin or hint
    return lambda value: isinstance(value, kind)

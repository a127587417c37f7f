"""Checks of a case's attributes and shapes at load time, independent of any backend.

Two kinds, each reported as one line naming the case's file, line and field:

* Budgets, for every case: window taps, output elements and the work of one item stay within
  ``Limits`` (a 500,000-tap kernel or pads of a billion would otherwise hold a backend, the
  reference included, for minutes or exhaust the machine), and attribute integers fit int64.
* Validity, for a case that expects outputs: a model with an invalid geometry (a stride of 0, a
  kernel rank other than the input's, pads of the wrong length...) is the case author's mistake,
  not a backend's failure; a model meant to be invalid is written as a must-reject case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, TypeGuard

from .limits import Limits

INT64 = (-(2**63), 2**63 - 1)
FLOAT32_MAX = 3.4028234663852886e38
MUST_REJECT_HINT = "for a model meant to be invalid, write a must-reject case: `reject: <reason>`, no expected outputs"


@dataclass(frozen=True)
class Dialect:
    """How one operator family names its geometry attributes and which values it allows."""

    kernel: str
    pads: tuple[str, ...]  # one attribute of 2 * rank values, or begin and end of rank values each
    dilations: bool
    enums: dict[str, tuple]  # attribute -> its allowed values
    zero_strides_open: bool = False  # OpenVINO: strides and dilations of 0 are an open question
    auto_pad_default: str = "NOTSET"
    ceil: tuple[str, Any] = ("ceil_mode", 1)  # the attribute and value that round up


# auto_pad "" is left to the registry (an open question), so it is not refused here.
_ONNX_POOL = Dialect("kernel_shape", ("pads",), True, {
    "auto_pad": ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", ""), "ceil_mode": (0, 1), "storage_order": (0, 1)})
DIALECTS = {
    ("ai.onnx", "MaxPool"): _ONNX_POOL,
    ("com.ms.internal.nhwc", "MaxPool"): _ONNX_POOL,
    ("com.microsoft", "NhwcMaxPool"): _ONNX_POOL,
    ("ai.onnx", "MaxUnpool"): Dialect("kernel_shape", ("pads",), False, {}),
    ("org.openvinotoolkit", "MaxPool"): Dialect(
        "kernel", ("pads_begin", "pads_end"), True,
        {"auto_pad": ("explicit", "valid", "same_upper", "same_lower"), "rounding_type": ("floor", "ceil", "ceil_torch"),
         "index_element_type": ("i32", "i64")},
        zero_strides_open=True, auto_pad_default="explicit", ceil=("rounding_type", "ceil")),
}

Error = Callable[[tuple, str], Exception]  # (field path within the case, message) -> CaseError


def check_attribute_values(attributes: dict, where: tuple, error: Error) -> None:
    """ONNX stores INT attributes as int64 and FLOAT ones as float32: larger values cannot be written."""
    for name, value in attributes.items():
        for index, v in enumerate(value if isinstance(value, list) else [value]):
            at = where + (name,) + ((index,) if isinstance(value, list) else ())
            if isinstance(v, int) and not INT64[0] <= v <= INT64[1]:
                raise error(at, f"{v} does not fit an ONNX integer attribute (int64)")
            if isinstance(v, float) and math.isfinite(v) and abs(v) > FLOAT32_MAX:
                raise error(at, f"{v:g} does not fit an ONNX float attribute (float32)")


def check_geometry(domain: str, op: str, attributes: dict, shapes: dict[str, tuple[int, ...]],
                   output_shape: list[int] | None, expects_outputs: bool, limits: Limits,
                   where: tuple, input_field: Callable[[str], tuple], error: Error) -> None:
    """Validity (where the case expects outputs) and budgets of one node. ``shapes``: the case's
    inputs by port, channels-first; ``output_shape``: MaxUnpool's literal output_shape input."""
    dialect = DIALECTS.get((domain, op))
    kernel = attributes.get(dialect.kernel) if dialect else None
    if dialect is None or not _ints(kernel):
        return  # absent or of the wrong kind: the signature checks report it
    rank = len(kernel)

    def fail(name: str, message: str) -> Exception:
        return error(where + (name,), f"{message}; {MUST_REJECT_HINT}")

    taps = math.prod(kernel)
    if taps > limits.taps:
        raise error(where + (dialect.kernel,), limits.exceeded("taps", taps, "window taps"))
    x_port = "X" if "X" in shapes else None
    if expects_outputs:
        _check_validity(dialect, attributes, rank, shapes.get(x_port) if x_port else None, fail, input_field)
    if x_port is None or not _consistent(dialect, attributes, rank, len(shapes[x_port])):
        return
    x = shapes[x_port]
    if op == "MaxUnpool":
        out = _unpool_output(x, kernel, attributes, output_shape)
        field = input_field("output_shape") if output_shape is not None else where + (
            "strides" if "strides" in attributes else dialect.kernel,)
    else:
        out = x[:2] + _pool_output(dialect, x[2:], kernel, attributes)
        field = where + (dialect.pads[0],) if any(attributes.get(p) for p in dialect.pads) else input_field(x_port)
    if any(d < 0 for d in out):
        if expects_outputs:
            raise fail(dialect.kernel, f"the window is larger than the padded input: the output shape would be {list(out)}")
        return
    elements = math.prod(out)
    if elements > limits.elements:
        raise error(field, limits.exceeded("elements", elements, f"output elements (shape {list(out)})"))
    if elements * taps > limits.work:
        raise error(where + (dialect.kernel,), limits.exceeded(
            "work", elements * taps, f"window taps to read ({taps:,} taps x {elements:,} outputs)"))


def pool_output_shape(domain: str, op: str, attributes: dict, x: tuple[int, ...]) -> tuple[int, ...] | None:
    """The output shape of a pooling node (None where its attributes do not give one), e.g. of an
    upstream MaxPool whose outputs feed the case's MaxUnpool."""
    dialect = DIALECTS.get((domain, op))
    kernel = attributes.get(dialect.kernel) if dialect else None
    if dialect is None or op == "MaxUnpool" or not _ints(kernel) or not _consistent(dialect, attributes, len(kernel), len(x)):
        return None
    return x[:2] + _pool_output(dialect, x[2:], kernel, attributes)


def _check_validity(dialect: Dialect, attributes: dict, rank: int, x: tuple[int, ...] | None,
                    fail: Callable[[str, str], Exception], input_field: Callable[[str], tuple]) -> None:
    kernel = attributes[dialect.kernel]
    if rank == 0:
        raise fail(dialect.kernel, f"{dialect.kernel} is empty: a window needs at least one spatial axis")
    if any(k < 1 for k in kernel):
        raise fail(dialect.kernel, f"{dialect.kernel} {kernel}: every window size is at least 1")
    if x is not None and len(x) != rank + 2:
        raise fail(dialect.kernel, f"{dialect.kernel} has {_count(rank, 'axis')} but X has rank {len(x)}: "
                                   f"it needs N, C and {_count(rank, 'spatial axis')}")
    smallest_step = 0 if dialect.zero_strides_open else 1
    for name in ("strides",) + (("dilations",) if dialect.dilations else ()):
        value = attributes.get(name)
        if value is None or not _ints(value):
            continue
        if len(value) != rank:
            raise fail(name, f"{name} has {_count(len(value), 'value')} for a kernel of {_count(rank, 'axis')}")
        if any(v < smallest_step for v in value):
            raise fail(name, f"{name} {value}: each is at least {smallest_step}")
    for name in dialect.pads:
        value = attributes.get(name)
        if value is None or not _ints(value):
            continue
        wanted = 2 * rank if len(dialect.pads) == 1 else rank
        if len(value) != wanted:
            raise fail(name, f"{name} has {_count(len(value), 'value')}; a kernel of {_count(rank, 'axis')} takes {wanted}")
        if any(v < 0 for v in value):
            raise fail(name, f"{name} {value}: pads are at least 0")
    for name, allowed in dialect.enums.items():
        if name in attributes and attributes[name] not in allowed:
            shown = ", ".join(repr(a) for a in allowed if a != "")
            raise fail(name, f"{attributes[name]!r} is not one of {shown}")


def _consistent(dialect: Dialect, attributes: dict, rank: int, x_rank: int) -> bool:
    """Whether the sizes can be computed: a must-reject case may break any of this."""
    if x_rank != rank + 2 or rank == 0 or any(k < 1 for k in attributes[dialect.kernel]):
        return False
    lengths = {"strides": rank, "dilations": rank, **{p: (2 * rank if len(dialect.pads) == 1 else rank) for p in dialect.pads}}
    return all(name not in attributes or (_ints(attributes[name]) and len(attributes[name]) == n)
               for name, n in lengths.items())


def _pool_output(dialect: Dialect, spatial: tuple[int, ...], kernel: list[int], attributes: dict) -> tuple[int, ...]:
    rank = len(kernel)
    strides = [max(s, 1) for s in attributes.get("strides", [1] * rank)]
    dilations = [max(d, 1) for d in attributes.get("dilations", [1] * rank)]
    if len(dialect.pads) == 1:
        pads = attributes.get("pads", [0] * 2 * rank)
        begins, ends = pads[:rank], pads[rank:]
    else:
        begins, ends = (attributes.get(p, [0] * rank) for p in dialect.pads)
    auto_pad = str(attributes.get("auto_pad", dialect.auto_pad_default)).upper()
    ceil_attribute, ceil_value = dialect.ceil
    ceil = attributes.get(ceil_attribute) == ceil_value
    out = []
    for size, k, s, d, b, e in zip(spatial, kernel, strides, dilations, begins, ends):
        extent = (k - 1) * d + 1
        if auto_pad.startswith("SAME"):
            out.append(-(-size // s))
        elif auto_pad == "VALID":
            out.append(-(-(size - extent + 1) // s))
        else:
            span = size + b + e - extent
            out.append((-(-span // s) if ceil else span // s) + 1)  # 0 is an empty output; below, invalid
    return tuple(out)


def _unpool_output(x: tuple[int, ...], kernel: list[int], attributes: dict, output_shape: list[int] | None) -> tuple[int, ...]:
    if output_shape is not None:
        return tuple(max(d, 0) for d in output_shape)
    rank = len(kernel)
    strides = attributes.get("strides", [1] * rank)
    pads = attributes.get("pads", [0] * 2 * rank)
    return x[:2] + tuple((size - 1) * s + k - pads[i] - pads[i + rank]
                         for i, (size, k, s) in enumerate(zip(x[2:], kernel, strides)))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun[:-2] + 'es' if noun.endswith('is') else noun + 's'}"


def _ints(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)

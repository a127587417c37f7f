"""How the judge compares an output with what it should be: one equality of values, the
position checks of an output that holds positions, and the mismatches they find.

Values compare bit for bit (so -0.0 is not 0.0), except that any NaN equals any NaN: a runtime's
NaN payload is its own (x86 gives 0xffc00000 where the input held 0x7fc00000). Shapes and element
types compare strictly. An output that holds positions (MaxPool's Indices) is checked for what it
means, so that a backend may break ties differently: each index must point inside its window,
not into padding, at an element equal to the expected maximum.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..expand.items import Item, ItemOutput, stored_shape
from ..semantics import OPENVINO_DOMAIN, from_storage_order, node_axes, openvino_bound

SHOWN_MISMATCHES = 8  # the differing positions a mismatch lists: the first few tell; the rest are counted


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The judge's one equality, element by element, of two arrays of one element type and shape
    (the judge compares types and shapes first): the same bits, or NaN on both sides."""
    if np.issubdtype(a.dtype, np.integer):
        return a == b
    unsigned = f"u{a.dtype.itemsize}"
    equal = np.ascontiguousarray(a).view(unsigned) == np.ascontiguousarray(b).view(unsigned)
    return equal | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))


def same_elements(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``same_bits`` of two arrays of one shape whose element types may differ: no element of one
    type is the same as one of another (a defect model's answer beside the backend's)."""
    if a.dtype != b.dtype:
        return np.zeros(a.shape, bool)
    return same_bits(a, b)


def same_bytes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element by element, byte for byte, NaN payloads included, where that is meant: a value the
    documents leave undefined may be any value, but the same one each time the backend runs the
    model (arrays of one element type and shape)."""
    if a.dtype.itemsize not in (1, 2, 4, 8):
        return a == b
    unsigned = f"u{a.dtype.itemsize}"
    return np.ascontiguousarray(a).view(unsigned) == np.ascontiguousarray(b).view(unsigned)


@dataclass
class Mismatch:
    """One way an output differs: a summary, the first differing positions, and where it differs
    on the first 2-D plane that does ("x" differs, "." agrees; at most 32 x 32 shown)."""

    output: str
    summary: str
    shown: list[str] = field(default_factory=list)
    plane: list[int] | None = None
    mask: list[str] | None = None
    of_form: bool = False  # a wrong element type or shape, rather than wrong values

    def text(self) -> str:
        return "\n".join([self.summary] + [f"  {line}" for line in self.shown])

    def line(self) -> str:
        return f"{self.summary}; {self.shown[0]}" if self.shown else self.summary

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v not in (None, []) and k != "of_form"}


def compare(item: Item, written: dict[str, np.ndarray], expected: dict[str, np.ndarray],
            actual: Sequence[Any]) -> list[Mismatch]:
    """Every way ``actual`` (one array per output) differs from ``expected``, one paragraph each
    (``written``: the inputs as the case writes them, channels-first)."""
    found = []
    for output, got in zip(item.outputs, actual):
        want = expected[output.name]
        if got.dtype != want.dtype:
            found.append(Mismatch(output.name, f"{output.name}: element type {got.dtype}, expected {want.dtype}", of_form=True))
        elif got.shape != want.shape:
            found.append(Mismatch(output.name, f"{output.name}: shape {list(got.shape)}, expected {list(want.shape)}",
                                  of_form=True))
        elif output.positions_of and item.case.domain == OPENVINO_DOMAIN:
            found += _check_reduced_positions(item, output, written, expected[output.positions_of], want, got)
        elif output.positions_of:
            found += _check_positions(item, output, written, want, got)
        else:
            found += _check_values(output.name, want, got)
    return found


def _check_values(name: str, want: np.ndarray, got: np.ndarray) -> list[Mismatch]:
    bad = ~same_bits(want, got)
    if not bad.any():
        return []
    shown = [f"{name}[{position_text(at)}]: expected {shown_value(want[at])}, got {shown_value(got[at])}"
             for at in first_positions(bad)]
    return [_mismatch(name, f"{name}: {int(bad.sum())} of {want.size} elements differ", shown, bad)]


def first_positions(bad: np.ndarray) -> list[tuple[int, ...]]:
    return [tuple(int(p) for p in pos) for pos in np.argwhere(bad)[:SHOWN_MISMATCHES]]


def position_text(position: tuple[int, ...]) -> str:
    return ", ".join(map(str, position))


def _mismatch(name: str, summary: str, shown: list[str], bad: np.ndarray) -> Mismatch:
    if bad.sum() > SHOWN_MISMATCHES:
        shown.append(f"... and {int(bad.sum()) - SHOWN_MISMATCHES} more")
    if bad.ndim < 2:
        return Mismatch(name, summary, shown)
    leading = tuple(int(i) for i in np.argwhere(bad)[0][:-2])
    grid = bad[leading][:32, :32]
    return Mismatch(name, summary, shown, list(leading), ["".join("x" if v else "." for v in row) for row in grid])


def _check_positions(item: Item, output: ItemOutput, written: dict[str, np.ndarray],
                     want: np.ndarray, got: np.ndarray) -> list[Mismatch]:
    """Each index must name an element of its own window equal to the one the expected index
    names, its maximum (before any activation). X is as the case writes it, channels-first, and
    the indices as ai.onnx gives them, whatever the operator's layout (``nhwc-indices``)."""
    ok, inside, row_major, values = positions_ok(item, written, want, got)
    if ok.all():
        return []
    x = written[item.inputs[0].name]
    shown = []
    for at in first_positions(~ok):
        index, wanted = int(got[at]), int(want[at])
        if not inside[at]:
            why = f"outside [0, {x.size})" if index >= 0 or wanted >= 0 else "not the expected marker"
        else:
            element: tuple[Any, ...] = np.unravel_index(int(row_major[at]), x.shape)
            shown_at = stored_shape(element, item.layout)  # where the backend's X holds it
            why = (f"X[{position_text(shown_at)}] = {shown_value(x[element])}; "
                   f"the window's maximum is {shown_value(values[at])}")
        shown.append(f"{output.name}[{position_text(at)}] = {index} (expected e.g. {wanted}): {why}")
    summary = f"{output.name}: {int((~ok).sum())} of {got.size} indices do not point at their window's maximum"
    return [_mismatch(output.name, summary, shown, ~ok)]


def positions_ok(item: Item, written: dict[str, np.ndarray], want: np.ndarray,
                  got: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(which indices are right, which name an element of X, their row-major positions, the
    maximum each should point at)."""
    x = written[item.inputs[0].name]
    attrs = item.case.attributes
    axes = node_axes(item.case.domain, attrs, x.shape[2:])
    order = attrs.get("storage_order", 0)
    wanted_at = from_storage_order(want, x.shape, order)
    values = x.reshape(-1)[np.where(want >= 0, wanted_at, 0)] if x.size else np.zeros(want.shape, x.dtype)
    row_major = from_storage_order(got, x.shape, order)
    inside = (row_major >= 0) & (row_major < x.size)
    safe = np.where(inside, row_major, 0)
    plane_size = int(np.prod(x.shape[2:], dtype=np.int64))
    plane, within = np.divmod(safe, max(plane_size, 1))
    position = np.indices(got.shape)
    ok = inside & (plane == position[0] * x.shape[1] + position[1])
    coords = np.unravel_index(within, x.shape[2:]) if plane_size else ()
    for axis, a in enumerate(axes if plane_size else ()):  # an empty spatial axis: no element to be in
        offset = coords[axis] - (position[2 + axis] * a.stride - a.pad_begin)
        ok &= (offset >= 0) & (offset % a.dilation == 0) & (offset // a.dilation < a.kernel)
    if x.size:
        ok &= same_bits(x.reshape(-1)[safe], values)
    # A window over padding alone has no element to point at: only the expected marker will do.
    return np.where(want < 0, got == want, ok), inside, row_major, values


def _check_reduced_positions(item: Item, output: ItemOutput, written: dict[str, np.ndarray],
                             maxima: np.ndarray, want: np.ndarray, got: np.ndarray) -> list[Mismatch]:
    """OpenVINO's Indices count from `axis` on, so they name an element only up to the axes
    before it: an index passes when some element of its window sits at that reduced index and
    holds the expected maximum."""
    ok = reduced_positions_ok(item, written, maxima, want, got)
    if ok.all():
        return []
    shown = [f"{output.name}[{position_text(at)}] = {int(got[at])} (expected e.g. {int(want[at])}): no element of the window "
             f"at that index holds the maximum {shown_value(maxima[at])}" for at in first_positions(~ok)]
    summary = f"{output.name}: {int((~ok).sum())} of {got.size} indices do not point at their window's maximum"
    return [_mismatch(output.name, summary, shown, ~ok)]


def reduced_positions_ok(item: Item, written: dict[str, np.ndarray], maxima: np.ndarray,
                          want: np.ndarray, got: np.ndarray) -> np.ndarray:
    x = written[item.inputs[0].name]
    a = item.case.attributes
    axes = node_axes(item.case.domain, a, x.shape[2:])
    bound = max(openvino_bound(x.shape, a.get("axis", 0)), 1)
    flat_x = x.reshape(-1)
    position = np.indices(got.shape)
    plane = (position[0] * x.shape[1] + position[1]) * int(np.prod(x.shape[2:], dtype=np.int64))
    ok = np.zeros(got.shape, bool)
    for tap in itertools.product(*(range(axis.kernel) for axis in axes)):
        inside = np.ones(got.shape, bool)
        element = plane
        for i, (axis, j) in enumerate(zip(axes, tap)):
            at = position[2 + i] * axis.stride - axis.pad_begin + j * axis.dilation
            inside &= (at >= 0) & (at < axis.size)
            element = element + np.clip(at, 0, axis.size - 1) * int(np.prod(x.shape[3 + i:], dtype=np.int64))
        if x.size:
            ok |= inside & (element % bound == got) & same_bits(flat_x[element], maxima)
    return np.where(want < 0, got == want, ok)  # no element to point at (openvino-window-without-element)


def matches(item: Item, written: dict[str, np.ndarray], outputs: Sequence[np.ndarray], actual: Sequence[Any]) -> bool:
    """Whether ``actual`` is what another reading answers: bit for bit, or, for Indices, any
    index of an equal maximum of the same window."""
    if len(actual) != len(outputs):
        return False
    equal = [isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
             and bool(same_bits(want, got).all()) for want, got in zip(outputs, actual)]
    if all(equal):
        return True
    if any(not same and not port.positions_of for same, port in zip(equal, item.outputs)):
        return False  # values compare bit for bit: only Indices can match otherwise
    try:
        return not compare(item, written, dict(zip((o.name for o in item.outputs), outputs)), actual)
    except (ValueError, IndexError):  # the windows of another reading: only an exact match counts
        return False


def shown_value(value: Any) -> str:
    value = np.asarray(value)
    if np.issubdtype(value.dtype, np.integer):
        return str(int(value))
    as_float = float(value.astype(np.float64))
    bits = int(value.reshape(1).view(f"u{value.dtype.itemsize}")[0])
    return f"{as_float!r} (0x{bits:0{2 * value.dtype.itemsize}x})"

"""Values the documents leave undefined: recorded, never judged. A registry entry with
``undefined_values: empty-windows`` says that an output element whose window holds no input
element (wholly in padding, or ceil's extra window past the input) has no defined value: any
answer there is ``divergent``, recorded with its class (-inf, the type's lowest finite, an input
element, 0, NaN, other; for Indices -1, an index into X, or one outside it), with one exception:
an answer that changes between two runs of the same model on the same inputs (uninitialised
memory) is a ``fail``, "not deterministic". Windows that hold elements are judged as ever."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

from ..expand.items import CHANNELS_LAST, Item, stored
from ..load.cases import Ambiguity
from ..semantics import DEFAULT, GeometryError, Readings, alternatives, node_axes
from .ambiguities import Questions
from .compare import same_bytes

EMPTY_WINDOWS = "empty-windows"


def questions_of(found: Questions, registry: dict[str, Ambiguity]) -> list[str]:
    """The item's open questions that leave the values of empty windows undefined."""
    return [key for key in found.ids if registry[key].status == "open"
            and registry[key].entry.get("undefined_values") == EMPTY_WINDOWS]


def empty_windows(item: Item, found: Questions, shape: tuple[int, ...]) -> np.ndarray | None:
    """Where an output of ``shape`` (Y's, in the operator's layout) has a window that holds no
    input element, under any reading of the item's questions whose windows give that shape; None
    where none does (or the item pools nothing)."""
    case = item.case
    if case.op not in ("MaxPool", "NhwcMaxPool") or len(shape) < 3:
        return None
    x_shape = item.inputs[0].spec.shape
    first = (shape[0], shape[-1], *shape[1:-1]) if item.layout == CHANNELS_LAST else tuple(shape)
    mask = None
    for readings in [DEFAULT, *(Readings({key: r}) for key in found.ids for r in alternatives(key))]:
        try:
            axes = node_axes(case.domain, case.attributes, x_shape[2:], readings)
        except (GeometryError, KeyError, TypeError, ValueError):
            continue
        if (x_shape[0], x_shape[1], *(a.out for a in axes)) != first:
            continue
        empty = np.zeros(first, bool)
        for i, axis in enumerate(axes):
            along = np.array([not axis.holds_an_element(o) for o in range(axis.out)], bool)
            empty |= along.reshape((1, 1) + tuple(-1 if j == i else 1 for j in range(len(axes))))
        mask = empty if mask is None else mask | empty
    return None if mask is None else stored(mask, item.layout)


def value_class(value: np.ndarray, x: np.ndarray) -> str:
    """What a value at an undefined position is, in words a report can group by."""
    if np.issubdtype(value.dtype, np.integer):
        if value == np.iinfo(value.dtype).min:
            return "the type's lowest"
    else:
        as_float = float(value.astype(np.float64))
        if np.isnan(as_float):
            return "NaN"
        if np.isneginf(as_float):
            return "-inf"
        if value == ml_dtypes.finfo(value.dtype).min:
            return "the type's lowest finite"
    if value == 0:
        return "0"
    flat = x.reshape(-1)
    bits = f"u{value.dtype.itemsize}"
    if flat.size and (np.ascontiguousarray(flat).view(bits) == np.asarray(value).reshape(1).view(bits)[0]).any():
        return "an input element"
    return "other"


def index_class(index: int, x_size: int) -> str:
    return "index -1" if index == -1 else "an index into X" if 0 <= index < x_size else "an index outside X"


def classes(item: Item, written: dict[str, np.ndarray], actual: Sequence[Any], where: np.ndarray) -> list[str]:
    """The classes of the answers at the undefined positions ``where`` (of Y's shape)."""
    x = written[item.inputs[0].name]
    found = set()
    for output, got in zip(item.outputs, actual):
        if got.shape != where.shape:
            continue
        for at in np.argwhere(where):
            value = got[tuple(at)]
            found.add(index_class(int(value), x.size) if output.positions_of else value_class(value, x))
    return sorted(found)


def changed_between_runs(actual: Sequence[Any], again: Callable[[], Sequence[Any]]) -> str | None:
    """Why a second run on the same model and inputs answers otherwise, or None where it gives the
    same outputs, bit for bit."""
    try:
        second = again()
    except Exception as e:  # noqa: BLE001 - refusing the second time is a change too
        return f"the second run raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if len(second) != len(actual):
        return f"the second run gave {len(second)} outputs, the first {len(actual)}"
    for index, (one, two) in enumerate(zip(actual, second)):
        two = np.asarray(two)
        if one.dtype != two.dtype or one.shape != two.shape:
            return f"output {index}: {two.dtype}{list(two.shape)} the second time, {one.dtype}{list(one.shape)} the first"
        differ = ~same_bytes(one, two)
        if np.any(differ):
            at = tuple(int(i) for i in np.argwhere(differ)[0])
            return f"output {index}[{', '.join(map(str, at))}] was {one[at]!r}, then {two[at]!r}"
    return None

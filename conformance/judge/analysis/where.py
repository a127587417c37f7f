"""Where an undiagnosed failure's differences lie: the class of input window that every wrong
element shares, and some right element lacks where one does (a window holding NaN, an infinity, zeros of both
signs, a subnormal, or one reaching over the padding). No defect model reproduces such an item,
but what its wrong elements have in common is what the failure depends on: one runtime bug hits
items of many cases, shapes and types through the same class of window, and the report groups
them by it (``report/results.py``), as the fuzz's "what matters" does for a configuration.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

from ...expand.items import Item
from ...semantics import GeometryError, node_axes
from ..compare import same_bits
from .models.layouts import NHWC_DOMAINS

LOOKED_AT = 64  # wrong and right elements examined, each: enough to tell, bounded on a large output


def _holds_zeros_of_both_signs(window: np.ndarray) -> bool:
    zeros = window[window == 0]
    return bool(np.signbit(zeros).any() and (~np.signbit(zeros)).any())


# In the order a line names them: the rarer and more telling class first. A window's values come
# as float64 (every element type's values, signs of zero included), with its type's smallest normal.
CLASSES: tuple[tuple[str, Callable[[np.ndarray, float, bool], bool]], ...] = (
    ("windows holding NaN", lambda w, tiny, padded: bool(np.isnan(w).any())),
    ("windows holding an infinity", lambda w, tiny, padded: bool(np.isinf(w).any())),
    ("windows holding zeros of both signs", lambda w, tiny, padded: _holds_zeros_of_both_signs(w)),
    ("windows holding a subnormal", lambda w, tiny, padded: bool(((w != 0) & (np.abs(w) < tiny)).any())),
    ("windows over padding", lambda w, tiny, padded: padded),
)


def differences_lie(item: Item, inputs: dict[str, np.ndarray], expected: Sequence[np.ndarray],
                    actual: Sequence[Any]) -> str | None:
    """The first class (``CLASSES``) that every examined wrong element's window has and some right
    element's window lacks, else the first that every wrong one has (the item's every window may
    hold NaN); None where there is no MaxPool window to look at, a wrong shape, or no such class.
    The first output whose values differ (``same_bits``, as the judge compares elements) is looked at."""
    case = item.case
    if case.op not in ("MaxPool", "NhwcMaxPool") or not item.inputs:
        return None
    x = np.asarray(inputs[item.inputs[0].name])
    floating = x.dtype.kind == "f" or x.dtype in (ml_dtypes.bfloat16,)
    classes = CLASSES if floating else CLASSES[-1:]  # an integer holds none of the special values
    tiny = float(ml_dtypes.finfo(x.dtype).tiny) if floating else 0.0
    channels_last = case.domain in NHWC_DOMAINS
    spatial = (lambda shape: tuple(shape[1:-1])) if channels_last else (lambda shape: tuple(shape[2:]))
    try:
        axes = node_axes(case.domain, case.attributes, spatial(x.shape))
    except (GeometryError, KeyError, TypeError, ValueError):
        return None
    for want, got in zip(expected, actual):
        got = np.asarray(got)
        if got.shape != want.shape or got.dtype != want.dtype or got.ndim != x.ndim:
            return None
        wrong = ~same_bits(want, got)
        if wrong.any():
            return _class_of(x, axes, wrong, channels_last, classes, tiny)
    return None


def _class_of(x: np.ndarray, axes, wrong: np.ndarray, channels_last: bool, classes, tiny: float) -> str | None:
    def window(position: tuple[int, ...]) -> tuple[np.ndarray, float, bool]:
        if channels_last:
            n, c, out = position[0], position[-1], position[1:-1]
        else:
            n, c, out = position[0], position[1], position[2:]
        per_axis = [a.positions(o) for a, o in zip(axes, out)]
        inside = [[p for p in ps if 0 <= p < a.size] for a, ps in zip(axes, per_axis)]
        padded = any(len(i) < len(ps) for i, ps in zip(inside, per_axis))
        values = [x[(n, *p, c) if channels_last else (n, c, *p)] for p in itertools.product(*inside)]
        return np.asarray(values, dtype=x.dtype).astype(np.float64), tiny, padded

    wrong_windows = [window(tuple(p)) for p in np.argwhere(wrong)[:LOOKED_AT]]
    right_windows = [window(tuple(p)) for p in np.argwhere(~wrong)[:LOOKED_AT]]
    shared = [(name, has) for name, has in classes if all(has(*w) for w in wrong_windows)]
    telling = [name for name, has in shared if not all(has(*w) for w in right_windows)]
    return (telling or [name for name, _ in shared] or [None])[0]


"""Parametric defect models: a constant fitted from the backend's answer, and named with it.

A runtime's own stand-in for -inf (a seed of -3.4e37 for its running maximum, a padding value of
its own) is a constant no catalogued model lists. Where every element of Y the backend got wrong
is one finite value ``c``, and the reference's value there is smaller, the constant is fitted: the
running maximum seeded at ``c`` (every window; only where the reference has -inf there), or
padding that takes part with the value ``c`` (windows over padding only; only where two wrong
elements or more share it, since one free constant fits any single element). A fitted model is
named only where it reproduces Y exactly, bit for bit, and Y is the only output that differs
(where the constant wins a window, its Indices are the runtime's own to choose: a fitted model
does not guess them).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from reference_backend import ReferenceBackend

from ...expand.items import Item
from ...semantics import Axis
from .models.kit import pooled, with_results
from ..compare import same_bits
from ..diagnoses import Diagnosis, Model

SEED, PADDING = "seed_fitted", "padding_fitted"  # the models; each diagnosis carries its constant


def fitted(item: Item, model: Any, feeds: list[np.ndarray], actual: Sequence[Any], expected: Sequence[np.ndarray],
           differing: set[str]) -> list[Diagnosis]:
    """The fitted models that give the backend's Y exactly (``seed_fitted:-3.4e37``, ...)."""
    if not item.case.op.endswith("MaxPool") or item.case.upstream is not None or differing - {"Y"} or not expected:
        return []
    want, got = expected[0], np.asarray(actual[0])
    if got.dtype != want.dtype or got.shape != want.shape or not (want.dtype.kind == "f" or want.dtype.name == "bfloat16"):
        return []
    wrong = ~same_bits(got, want)
    constants = np.unique(got[wrong].astype(np.float64))
    if len(constants) != 1 or not np.isfinite(constants[0]):
        return []
    constant = want.dtype.type(constants[0])
    below = want[wrong].astype(np.float64)
    if not (below < float(constant)).all():  # a stand-in for -inf wins over smaller values only
        return []
    # One free constant fits any single wrong element: a seed is named only where it stands in for
    # -inf itself (some wrong element is -inf in the reference; -FLT_MAX beside it meets the seed
    # too), and from two wrong elements or more unless every one is -inf; padding only where two or
    # more share it (each a window over padding, as the exact reproduction then shows).
    several = int(wrong.sum()) >= 2
    candidates = [(SEED, _seeded_at(constant))] if np.isneginf(below).any() and (several or np.isneginf(below).all()) else []
    if several:
        candidates.append((PADDING, _padded_with(constant)))
    found = []
    for fitted_model, backend in candidates:
        try:
            outputs = backend.run_model(model, feeds)
        except Exception:  # noqa: BLE001 - a geometry the variant refuses reproduces nothing
            continue
        if np.asarray(outputs[0]).dtype == got.dtype and same_bits(np.asarray(outputs[0]), got).all():
            found.append(Diagnosis((Model(fitted_model, constant=spelled(constant)),)))
    return found


def spelled(constant: Any) -> str:
    """The constant as its type spells it shortest, without a "+" (a pair's separator): -3.4e37."""
    return str(constant).replace("+", "")


def title(model: Model) -> str | None:
    """The report's words for a fitted model, named with its constant (None for any other model)."""
    value = model.constant
    if model.name == SEED:
        return (f"-inf answered as {value}: the running maximum starts at {value}, not at -inf "
                "(a constant fitted from the answers)")
    if model.name == PADDING:
        return f"padding takes part in the maximum with the value {value} (a constant fitted from the answers)"
    return None


def _seeded_at(constant: Any) -> type[ReferenceBackend]:
    def seeded(y, indices, x, axes):
        return np.where(np.isnan(y.astype(np.float64)), y, np.maximum(y, constant)).astype(y.dtype), indices
    return with_results(seeded)


def _padded_with(constant: Any) -> type[ReferenceBackend]:
    def padded_pool(x, axes, storage_order, pool):
        _, indices = pool(x, axes, storage_order)
        widths = [(0, 0), (0, 0)] + [(a.pad_begin, a.pad_end + a.end_overhang) for a in axes]
        padded = np.pad(x, widths, constant_values=np.array(constant, x.dtype))
        inner = tuple(Axis(s, a.kernel, a.stride, a.dilation, 0, 0, a.out) for s, a in zip(padded.shape[2:], axes))
        return pool(padded, inner, storage_order)[0], indices
    return pooled(padded_pool)

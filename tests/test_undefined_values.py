"""Values the documents leave undefined are recorded, not judged: a window that holds no input
element may give any value (divergent, with its class), unless the value changes from run to run
(a fail: uninitialised memory). Windows that hold elements are judged as ever."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.backends import load_backend
from conformance.judge.undefined import empty_windows, index_class, value_class
from conformance.judge.verdict import evaluate
from conformance.outcomes import Outcome
from tests.support.bundled import bundled_items, bundled_registry


@pytest.fixture(scope="module")
def empty_window_items():
    registry = bundled_registry()
    chosen = [i for i in bundled_items() if not i.case.reject and i.dtype == "float32" and i.case.op == "MaxPool"
              and i.case.domain == "ai.onnx" and "window-in-padding-only" in (i.case.ambiguity.id if i.case.ambiguity else "")]
    assert chosen
    return chosen, registry


def test_the_lowest_finite_value_in_an_empty_window_is_divergent_with_its_class(empty_window_items):
    items, registry = empty_window_items
    backend = load_backend("tests.meta.support.faulty_backends:LowestFiniteInEmptyWindows")
    verdicts = [evaluate(i, backend, 0, registry) for i in items]
    undefined = [v for v in verdicts if v.reading and v.reading.startswith("undefined")]
    assert undefined and all(v.outcome is Outcome.DIVERGENT for v in undefined)
    assert all("the type's lowest finite" in v.reading for v in undefined)
    assert not [v for v in verdicts if v.outcome is Outcome.FAIL]


def test_fresh_garbage_in_an_empty_window_fails_as_not_deterministic(empty_window_items):
    items, registry = empty_window_items
    backend = load_backend("tests.meta.support.faulty_backends:FreshGarbageInEmptyWindows")
    verdicts = [evaluate(i, backend, 0, registry) for i in items]
    failed = [v for v in verdicts if v.outcome is Outcome.FAIL]
    assert failed and all(v.message.startswith("not deterministic") for v in failed)


def test_a_wrong_value_in_a_window_with_elements_still_fails(empty_window_items):
    """WrongEverywhere-like: the lowest finite where the reference has -inf, plus one wrong element
    elsewhere: the undefined positions excuse nothing else."""
    items, registry = empty_window_items

    class Wrong:
        name, version = "wrong", "0"

        def details(self):
            return {}

        def run(self, model, inputs):
            outputs = load_backend("tests.meta.support.faulty_backends:LowestFiniteInEmptyWindows").run(model, inputs)
            y = outputs[0].copy()
            finite = np.flatnonzero(np.isfinite(y) & (y > np.finfo(y.dtype).min))
            if finite.size:
                y.reshape(-1)[finite[0]] += 1
            return [y, *outputs[1:]]

    verdicts = [evaluate(i, Wrong(), 0, registry) for i in items]
    assert any(v.outcome is Outcome.FAIL and not v.message.startswith("not deterministic") for v in verdicts)


def test_the_empty_windows_of_a_window_over_padding_only(empty_window_items):
    items, _ = empty_window_items
    from conformance.judge.ambiguities import Questions

    item = next(i for i in items if i.case.attributes.get("pads") and not i.case.attributes.get("ceil_mode"))
    a = item.case.attributes
    x = item.inputs[0].spec.shape
    from conformance.semantics import node_axes

    axes = node_axes("ai.onnx", a, x[2:])
    mask = empty_windows(item, Questions([]), (x[0], x[1], *(ax.out for ax in axes)))
    assert mask is not None and mask.any() and not mask.all()


@pytest.mark.parametrize("value, dtype, expected", [
    (-np.inf, np.float32, "-inf"), (np.finfo(np.float32).min, np.float32, "the type's lowest finite"),
    (np.nan, np.float32, "NaN"), (0.0, np.float16, "0"), (5.0, np.float32, "an input element"),
    (-3.4e37, np.float32, "other"), (-128, np.int8, "the type's lowest"), (7, np.uint8, "other")])
def test_value_classes(value, dtype, expected):
    assert value_class(np.array(value, dtype), np.array([5, 6], dtype)) == expected


def test_index_classes():
    assert [index_class(i, 4) for i in (-1, 0, 3, 4, -5)] == ["index -1", "an index into X", "an index into X",
                                                             "an index outside X", "an index outside X"]


def test_bfloat16_s_lowest_finite_has_its_class():
    import ml_dtypes

    lowest = ml_dtypes.finfo(ml_dtypes.bfloat16).min
    assert value_class(np.array(lowest, ml_dtypes.bfloat16), np.zeros(2, ml_dtypes.bfloat16)) == "the type's lowest finite"

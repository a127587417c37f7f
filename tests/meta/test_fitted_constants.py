"""Parametric models (conformance/judge/analysis/fitted.py): a runtime's own stand-in for -inf, a constant
no catalogued model lists, is fitted from the answers and named with its value, on a line of its
own; a backend whose wrong values are no single constant gets no fitted name."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance.judge.analysis.fitted import _padded_with, _seeded_at
from conformance.report.causes import failure_clusters
from tests.meta.support.mutant_backend import items_round_robin
from tests.meta.test_several_causes import records
from tests.support.named import names

SEED = np.float32(-3.4e37)  # the stand-in of the runtime: no model of the catalogue has it
PADDING = np.float32(-0.5)
PER_TEST = 200  # float32 MaxPool items, round-robin over the case classes: several whose answer the constant changes


class Variant:
    """A fitted model's variant of the reference, run as a backend under test."""

    version = "0"

    def __init__(self, name: str, backend):
        self.name, self.backend = name, backend

    def details(self):
        return {}

    def run(self, model, inputs):
        return self.backend.run_model(model, [inputs[i.name] for i in model.graph.input])


@cache
def float32_pools() -> list:
    return [i for i in items_round_robin() if not i.case.reject and i.case.op.endswith("MaxPool") and i.inputs
            and i.inputs[0].dtype.name == "float32" and i.case.upstream is None][:PER_TEST]


def failures(backend) -> list[tuple]:
    return records(backend, float32_pools())


@pytest.mark.parametrize(("backend", "name", "words"), [
    (Variant("seeds-at-minus-3.4e37", _seeded_at(SEED)), "seed_fitted:-3.4e37", "-inf answered as -3.4e37"),
    (Variant("pads-with-minus-half", _padded_with(PADDING)), "padding_fitted:-0.5",
     "padding takes part in the maximum with the value -0.5"),
], ids=["seed", "padding"])
def test_a_constant_no_model_lists_is_fitted_and_named_with_its_value(backend, name, words):
    failed = failures(backend)
    # Y alone wrong, on items that meet no open question (a window over padding only leaves its
    # value open to the runtime: any model gives it there), with two wrong elements or more (one free
    # constant fits any single element: fitted.py names none from one, unless it stands for -inf)
    values_only = [(v, r) for v, r in failed if {m.output for m in v.mismatches} == {"Y"} and not v.ambiguities
                   and not v.mismatches[0].summary.startswith("Y: 1 of ")]
    assert len(values_only) >= 3, f"{backend.name} changes too few items: {len(values_only)}"
    for verdict, record in values_only:
        assert name in names(verdict.diagnosis), (record["id"], names(verdict.diagnosis), verdict.message)
    lines = failure_clusters([r for _, r in values_only])[backend.name]
    assert len(lines) == 1 and words in lines[0].signature, [line.signature for line in lines]


class NudgedByTwoConstants(Variant):
    """Wrong by two different values: no one constant stands in for anything."""

    def run(self, model, inputs):
        outputs = list(self.backend.run_model(model, [inputs[i.name] for i in model.graph.input]))
        y = outputs[0]
        if y.dtype == np.float32 and y.size:
            flat = y.reshape(-1).copy()
            flat[0], flat[-1] = np.float32(-1e30), np.float32(-2e30)
            outputs[0] = flat.reshape(y.shape)
        return outputs


def test_wrong_values_that_are_no_single_constant_get_no_fitted_name():
    from reference_backend import ReferenceBackend

    failed = failures(NudgedByTwoConstants("two-constants", ReferenceBackend))
    assert sum(not v.mismatches[0].summary.startswith("Y: 1 of ") for v, _ in failed) >= 3  # two constants shown
    for verdict, record in failed:
        assert not any("fitted" in name for name in names(verdict.diagnosis)), (record["id"], names(verdict.diagnosis))

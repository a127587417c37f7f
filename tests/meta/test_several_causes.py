"""Several causes per item (conformance/judge/analysis/retyping.py): a backend that answers float16 in
float32 and has a second bug carries both causes on every item the second bug changes; each cause
is a line of the report, the item counted once in the totals, and a type-only item is never
"values differ"."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from reference_backend import ReferenceBackend
from conformance.judge.analysis.catalogue import BY_NAME
from conformance.judge.analysis.diagnosis import facts
from conformance.judge.verdict import Outcome, evaluate
from conformance.load.cases import bundled_case_dir
from conformance.report.record import item_record, with_verdict
from conformance.report.causes import failing_items, failure_clusters
from tests.meta.support.mutant_backend import REGISTRY, items_round_robin
from tests.support.named import names

# One second bug of each kind: the window's geometry, the padding's value, the Indices' layout.
SECOND_BUGS = ["ceil_mode_ignored", "padding_is_zero", "indices_per_plane"]
TYPE_CAUSE = "float16_computed_as_float32"
PER_BUG = 30  # float16 items per second bug, round-robin over the case classes: several it changes, at a few seconds


class Float16AnsweredAsFloat32:
    """A defect model's answers (or the reference's), with every float16 Y returned in float32."""

    version = "0"

    def __init__(self, second: str | None):
        self.second = second
        self.name = f"float16-as-float32+{second}"

    def details(self):
        return {}

    def run(self, model, inputs):
        backend = BY_NAME[self.second].backend if self.second else ReferenceBackend
        outputs = list(backend.run_model(model, [inputs[i.name] for i in model.graph.input]))
        if outputs[0].dtype == np.float16:
            outputs[0] = outputs[0].astype(np.float32)
        return outputs


@cache
def float16_items(second: str) -> list:
    model = BY_NAME[second]
    return [i for i in items_round_robin() if not i.case.reject and i.inputs
            and i.inputs[0].dtype.name == "float16" and model.applies(facts(i))][:PER_BUG]


def records(backend, items) -> list[tuple]:
    """Each failed item's verdict and its record, as a run's report writes it (``with_verdict``)."""
    judged = [(item, evaluate(item, backend, seed=0, registry=REGISTRY)) for item in items]
    return [(verdict, with_verdict({**item_record(item, bundled_case_dir()), "backend": backend.name}, verdict))
            for item, verdict in judged if verdict.outcome is Outcome.FAIL]


@pytest.mark.parametrize("second", SECOND_BUGS)
def test_float16_answered_as_float32_beside_a_second_bug_names_both_causes(second):
    backend = Float16AnsweredAsFloat32(second)
    judged = records(backend, float16_items(second))
    both = [(v, r) for v, r in judged if names(v.diagnosis) != [TYPE_CAUSE]]
    assert len(both) >= 3, f"{second} changes too few float16 items: {len(both)}"
    for verdict, record in judged:  # every failing item: the type, and the second bug where it changed the values
        assert verdict.retyped == [TYPE_CAUSE], record["id"]
        assert verdict.message.split(": ", 1)[1].startswith("element type float32, expected float16"), verdict.message
        assert names(verdict.diagnosis) == [TYPE_CAUSE] or second in names(verdict.diagnosis), (record["id"], names(verdict.diagnosis))
    lines = {c.signature: c for c in failure_clusters([r for _, r in judged])[backend.name]}
    type_line = next(c for s, c in lines.items() if f"({TYPE_CAUSE})" in s)
    second_line = next(c for s, c in lines.items() if f"({second})" in s)
    assert len(type_line.records) == len(judged)  # every item the type explains, on its line
    assert {r["id"] for r in second_line.records} == {r["id"] for _, r in both}
    assert failing_items(lines.values()) == len(judged)  # each item counted once
    assert names(type_line.smallest.get("diagnosis")) == [TYPE_CAUSE]  # the type alone, where an item shows it alone


def test_a_float16_answer_in_float32_with_right_values_is_the_type_alone():
    backend = Float16AnsweredAsFloat32(None)
    items = [i for i in items_round_robin() if not i.case.reject and i.inputs and i.inputs[0].dtype.name == "float16"][:40]
    judged = records(backend, items)
    assert len(judged) == len(items)
    for verdict, record in judged:
        assert names(verdict.diagnosis) == [TYPE_CAUSE] and "match no reading" not in verdict.message, (record["id"], verdict.message)
    (line,) = failure_clusters([r for _, r in judged])[backend.name]
    assert f"({TYPE_CAUSE})" in line.signature


class Float16AnsweredAsFloat32WithAFlippedSign(Float16AnsweredAsFloat32):
    """float16 answered in float32, and the first element's sign flipped: a bug no model names."""

    def __init__(self):
        super().__init__(None)
        self.name = "float16-as-float32+flipped-sign"

    def run(self, model, inputs):
        outputs = super().run(model, inputs)
        outputs[0] = outputs[0].copy()
        outputs[0].reshape(-1)[:1] *= -1
        return outputs


def test_a_drafted_expectations_file_lists_a_retyped_item_whose_values_no_model_names():
    """Its record sits on the retyping's line (diagnosed) with no diagnosis of its own: the draft
    lists it by id, as an entry's diagnosis (read from the values') could not take it (a trial's
    report crashed here: x2paddle's bfloat16 answered as float32, a subnormal's sign flipped)."""
    from conformance.report.expectations_draft import drafted_by_line
    from conformance.report.record import catalogue_of

    backend = Float16AnsweredAsFloat32WithAFlippedSign()
    found = [r for _, r in records(backend, float16_items("padding_is_zero")[:8])]
    assert any(r.get("retyped") and not r.get("diagnosis") for r in found)
    lines = failure_clusters(found)[backend.name]
    drafted = drafted_by_line(lines, found, catalogue_of(found))
    listed = {r["id"] for line, entries in drafted for r in line.records if entries}
    assert listed == {r["id"] for r in found}

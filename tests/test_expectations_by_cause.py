"""An expectations entry may name a cause (a defect model, a family of them, a pair) instead of ids:
an item whose failure that cause reproduces exactly is `xfail`, shown as "a known cause, on an item no
entry lists", whichever shapes a machine's kernels make fail; an item that fails in another way
still fails."""

from __future__ import annotations

import pytest

from conformance.backends import load_backend
from conformance.judge.expectations import load_expectations
from conformance.judge.verdict import evaluate
from conformance.outcomes import Outcome
from tests.support.bundled import bundled_items, bundled_registry

BY_CAUSE = """\
backend: {name}
entries:
  - match: "MaxPool-*/pads_beyond_kernel/*"
    outcome: error
    reason: listed by id
  - diagnosis: finite_value_for_minus_inf
    match: "*[[]float32[]]"
    outcome: fail
    reason: the running maximum starts at -FLT_MAX
    cause: finite_value_for_minus_inf
"""


@pytest.fixture(scope="module")
def item():
    """An item no id glob lists, whose maxima include -inf: the seed bug shows on it."""
    return next(i for i in bundled_items() if i.id == "MaxPool-12/infinities/1d-y_indices[float32]")


def judged(item, fake: str, tmp_path):
    (tmp_path / f"{fake}.yaml").write_text(BY_CAUSE.format(name=fake))
    backend = load_backend(f"tests.meta.support.faulty_backends:{fake}")
    verdict = evaluate(item, backend, 0, bundled_registry())
    listing = load_expectations(tmp_path, backend.name)
    return verdict, *listing.apply(item.id, verdict)


def test_a_failure_the_named_cause_reproduces_is_a_known_cause_on_an_item_not_listed(item, tmp_path):
    verdict, applied, entry = judged(item, "SeedsFloat32AtLowestFinite", tmp_path)
    assert verdict.outcome is Outcome.FAIL and verdict.diagnosis
    assert applied.outcome is Outcome.XFAIL and entry.diagnosis == "finite_value_for_minus_inf"
    assert "known cause finite_value_for_minus_inf" in applied.message and "on an item no entry lists" in applied.message


def test_the_same_item_failing_in_a_second_way_still_fails(item, tmp_path):
    verdict, applied, entry = judged(item, "SeedsAtLowestFiniteAndShiftsIndices", tmp_path)
    assert verdict.outcome is Outcome.FAIL and applied.outcome is Outcome.FAIL and entry is None


def test_an_entry_by_cause_is_never_stale_by_its_ids(tmp_path):
    (tmp_path / "b.yaml").write_text(BY_CAUSE.format(name="b"))
    listing = load_expectations(tmp_path, "b")
    assert [e.match for e in listing.stale(["MaxPool-12/other[float32]"])] == ["MaxPool-*/pads_beyond_kernel/*"]


def test_a_draft_lists_a_diagnosed_line_by_its_cause(item, tmp_path):
    """`conformance expectations` drafts a line defect models reproduce as an entry by cause, so that
    a draft made from a sample is no narrower than the run it came from."""
    from conformance.load.cases import bundled_case_dir
    from conformance.report.expectations_draft import draft_expectations
    from conformance.report.record import item_record, with_verdict
    from conformance.report.writer import Results, environment

    backend = load_backend("tests.meta.support.faulty_backends:SeedsFloat32AtLowestFinite")
    results = Results(environment([(backend, backend)], 0, bundled_case_dir()), None)
    record = item_record(item, bundled_case_dir())
    record["backend"], record["backend_version"] = backend.name, backend.version
    results.records.append(with_verdict(record, evaluate(item, backend, 0, bundled_registry())))
    drafted = draft_expectations(results.document(partial=False), backend.name)
    (tmp_path / f"{backend.name}.yaml").write_text(drafted)
    (entry,) = load_expectations(tmp_path, backend.name).entries
    assert entry.diagnosis and entry.match == "*" and entry.outcome is Outcome.FAIL

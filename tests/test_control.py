"""A refusal means something only against a control, and only a declared refusal is one: an item
refused by a backend that declares it cannot run its valid twin (a minimal valid model of the same
operator version, element type and rank) is `unsupported`, with both refusals; never an error, never
the pass of a must-reject item, never the `refused` reading of an open question. A twin that fails in
any other way (a crash, a panic, garbage, any other exception) is no control but a bug: the item is
judged on its own and carries the twin's failure. Where the backend runs the twin, a refusal is
judged as ever."""

from __future__ import annotations

import pytest

from conformance.backends import load_backend
from conformance.expand.items import valid_twin
from conformance.judge.control import twin_of
from conformance.judge.verdict import evaluate
from conformance.outcomes import Outcome
from tests.support.bundled import bundled_items, bundled_registry


@pytest.fixture(scope="module")
def items():
    return bundled_items()


def pick(items, predicate):
    return next(i for i in items if predicate(i))


def test_every_bundled_item_has_a_valid_twin_of_its_operator_version_and_rank(items):
    """Valid by the oracle's word: the reference runs each (twin_of checks it)."""
    for item in items[::7]:
        twin = twin_of(item, 0)
        assert twin is not None and twin.signature == item.signature, item.id
        assert not twin.case.reject and len(twin.inputs[0].shape) in (max(len(item.inputs[0].shape), 3), 4)  # rank: see twin_of
        twin.model  # onnx.checker passes: it is valid
        if not item.case.reject:
            assert twin.dtype == item.dtype and [o.name for o in twin.outputs] == [o.name for o in item.outputs]


def test_a_must_reject_item_refused_with_its_valid_twin_is_unsupported(items):
    item = pick(items, lambda i: i.case.reject and i.version == 22 and i.case.op == "MaxPool" and not i.case.ambiguity)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesOpset22"), 0, bundled_registry())
    assert verdict.outcome is Outcome.UNSUPPORTED and verdict.control == valid_twin(item).id
    assert "Opset 22 is under development" in verdict.message and "valid twin" in verdict.details


def test_a_must_reject_item_refused_where_the_twin_runs_passes(items):
    item = pick(items, lambda i: i.case.reject and i.version == 12 and i.case.op == "MaxPool" and not i.case.ambiguity)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesOpset22"), 0, bundled_registry())
    assert verdict.outcome is Outcome.PASS and verdict.control is None  # refused, and its opset-12 twin runs


def test_a_valid_item_the_backend_declares_it_cannot_run_is_unsupported_not_an_error(items):
    item = pick(items, lambda i: not i.case.reject and i.version == 22 and i.expectation == "literal")
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesOpset22"), 0, bundled_registry())
    assert verdict.outcome is Outcome.UNSUPPORTED and verdict.twin is None


def test_an_open_question_s_refused_reading_needs_the_twin_to_run(items):
    registry = bundled_registry()
    item = pick(items, lambda i: i.version == 22 and not i.case.reject and i.case.ambiguity is not None
                and "rejected" in registry[i.case.ambiguity.id].interpretations)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesOpset22"), 0, registry)
    assert verdict.outcome is Outcome.UNSUPPORTED and verdict.reading is None


def test_a_rank_without_kernels_is_unsupported_at_that_rank_alone(items):
    backend = load_backend("tests.meta.support.faulty_backends:RefusesFourSpatialAxes")
    deep = pick(items, lambda i: not i.case.reject and i.case.op == "MaxPool" and len(i.inputs[0].shape) >= 6)
    assert evaluate(deep, backend, 0, bundled_registry()).outcome is Outcome.UNSUPPORTED
    shallow = pick(items, lambda i: not i.case.reject and i.case.op == "MaxPool" and len(i.inputs[0].shape) == 4
                   and i.case.domain == "ai.onnx" and not i.case.ambiguity)
    assert evaluate(shallow, backend, 0, bundled_registry()).outcome in (Outcome.PASS, Outcome.DIVERGENT)


def test_a_refusal_where_the_twin_runs_stays_an_error(items):
    """A backend that refuses one kind of valid model but runs the twin: its refusal is the error it is."""
    item = pick(items, lambda i: not i.case.reject and i.case.op == "MaxPool" and i.case.domain == "ai.onnx"
                and "pads" in i.case.attributes and not i.case.ambiguity and i.expectation == "literal")
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesPads"), 0, bundled_registry())
    assert verdict.outcome is Outcome.ERROR and "pads are not implemented" in verdict.message and not verdict.control


def test_a_backend_that_refuses_everything_undeclared_errs_everywhere_and_names_its_minimal_valid_models(items):
    """A refusal of every model that declares nothing is a bug on the valid ones, never `unsupported`."""
    backend = load_backend("tests.meta.support.faulty_backends:RefusesEverything")
    chosen = [i for i in items if i.version == 12 and i.case.op == "MaxPool" and i.case.domain == "ai.onnx"][:40]
    verdicts = [evaluate(i, backend, 0, bundled_registry()) for i in chosen]
    assert {v.outcome for v in verdicts} == {Outcome.ERROR}
    assert all(v.twin and not v.control and "no kernels at all" in v.twin.message for v in verdicts)
    assert all("its minimal valid model fails too" in v.message for v in verdicts)


def _record(item_id, outcome, **extra):
    return {"backend": "b", "id": item_id, "op": "MaxPool", "version": 22, "outcome": outcome, "message": "m", **extra}


def test_compare_calls_an_item_that_runs_now_newly_supported_never_a_regression_or_a_fix():
    from conformance.report.compare_runs import compare_runs

    old = {"items": [_record("a", "unsupported"), _record("b", "unsupported"), _record("c", "pass")]}
    new = {"items": [_record("a", "fail"), _record("b", "pass"), _record("c", "unsupported")]}
    result = compare_runs(old, new)
    assert [c.id for c in result.newly_supported] == ["a", "b"]
    assert [c.id for c in result.regressions] == ["c"] and not result.fixes  # support lost is a regression


def test_the_report_says_what_a_backend_cannot_run_from_the_twins_it_refused():
    from conformance.report.results import cannot_run_lines

    items = [_record("x", "unsupported", control="MaxPool-22/valid_twin/rank4-X-Y[float32]"),
             _record("y", "unsupported", control="MaxPool-22/valid_twin/rank4-X-Y[float16]"),
             _record("z", "unsupported", control="MaxPool-12/valid_twin/rank4-X-Y[float32]")]
    assert cannot_run_lines(items) == ["b: MaxPool-12 at rank 4 (float32): 1 item unsupported",
                                      "b: MaxPool-22 at rank 4 (float16, float32): 2 items unsupported"]


def test_a_twin_answered_with_garbage_is_no_control_and_the_refusal_proves_nothing(items):
    item = pick(items, lambda i: i.case.reject and i.version == 11 and i.case.op == "MaxPool" and not i.case.ambiguity)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesAndGarblesItsTwin"), 0, bundled_registry())
    assert verdict.outcome is Outcome.ERROR and verdict.twin and "returned garbage" in verdict.twin.message


def test_a_must_reject_item_passes_on_a_refusal_only_against_a_twin_that_runs(items):
    """Refused, but the twin fails undeclared: no pass, and no unsupported either."""
    item = pick(items, lambda i: i.case.reject and i.version == 12 and i.case.op == "MaxPool" and not i.case.ambiguity)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesEverything"), 0, bundled_registry())
    assert verdict.outcome is Outcome.ERROR and verdict.twin.outcome is Outcome.ERROR


def test_a_not_implemented_error_is_a_declared_refusal(items):
    item = pick(items, lambda i: not i.case.reject and i.case.op == "MaxPool" and len(i.outputs) == 2)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:NotImplementedOnIndices"), 0, bundled_registry())
    assert verdict.outcome is Outcome.UNSUPPORTED and "NotImplementedError: MaxPool's Indices output" in verdict.message


def test_a_must_reject_item_refused_in_capability_words_passes_where_the_twin_runs(items):
    item = pick(items, lambda i: i.case.reject and i.version == 12 and i.case.op == "MaxPool" and not i.case.ambiguity)
    verdict = evaluate(item, load_backend("tests.meta.support.faulty_backends:RefusesInvalidModelsInCapabilityWords"), 0,
                       bundled_registry())
    assert verdict.outcome is Outcome.PASS and "Expected a 3D, 4D or 5D tensor" in verdict.message

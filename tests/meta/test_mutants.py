"""Principle 6: the suite catches deliberately broken variants of the reference backend.

Each mutant must make at least one item `fail` or `error`; divergent items (open questions) do
not count. Items are visited round-robin across case classes, so a mutant usually dies early.
"""

from __future__ import annotations

from functools import cache

import pytest

from conformance.judge.ambiguities import detected
from conformance.judge.verdict import Outcome, evaluate
from tests.meta.support.mutants import MUTANTS, Mutant
from conformance.report.results import readings_by_path
from conformance.expand.selectors import question_columns
from tests.meta.support.mutants_depth import DEPTH_MUTANTS, SPLIT_READING_MUTANTS
from tests.meta.support.mutants_paths import PATH_MUTANTS, Call, PathMutant
from tests.meta.support.mutant_backend import REGISTRY, MutantBackend, items_round_robin


def first_kill(mutant: Mutant | PathMutant) -> str | None:
    backend = MutantBackend(mutant)
    for item in items_round_robin():
        verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
        if verdict.outcome in (Outcome.FAIL, Outcome.ERROR):
            return f"{item.id}: {verdict.message.splitlines()[0]}"
    return None


def test_there_are_at_least_twenty_mutants():
    assert len(MUTANTS) >= 20
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)


@pytest.mark.parametrize("mutant", MUTANTS + PATH_MUTANTS + DEPTH_MUTANTS, ids=lambda m: m.name)
@pytest.mark.slow
def test_the_suite_catches_the_mutant(mutant, record_property):
    killer = first_kill(mutant)
    record_property("mutant", {"name": mutant.name, "killed_by": killer})
    assert killer, f"no unambiguous item catches {mutant.name}: {mutant.bug}"


def test_there_are_at_least_twenty_path_mutants():
    assert len(PATH_MUTANTS) >= 20
    assert not {m.name for m in PATH_MUTANTS} & {m.name for m in MUTANTS}
    assert not {m.name for m in DEPTH_MUTANTS} & {m.name for m in MUTANTS + PATH_MUTANTS}


@cache
def items_of(question: str) -> list:
    """The ai.onnx MaxPool items that run into ``question`` (the judge's own test)."""
    return [item for item in items_round_robin() if (item.case.domain, item.case.op) == ("ai.onnx", "MaxPool")
            and item.inputs[0].spec.shape is not None
            and question in detected(item, item.case_inputs(0), {question: REGISTRY[question]})]


def split_readings(mutant: PathMutant, question: str) -> dict:
    """readings_by_path over the items of ``question`` as ``mutant`` answers them."""
    backend = MutantBackend(mutant)
    records = []
    for item in items_of(question):
        verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
        records.append({"outcome": verdict.outcome.value, "ambiguity": verdict.ambiguities, "backend": backend.name,
                        "reading": verdict.reading or "", "readings": verdict.readings, "message": verdict.message,
                        "op": "MaxPool", "path": question_columns(item)})
    return readings_by_path(records)


@pytest.mark.parametrize(("mutant", "question", "path"), SPLIT_READING_MUTANTS, ids=lambda m: getattr(m, "name", ""))
@pytest.mark.slow
def test_the_report_names_a_question_read_differently_on_one_path(mutant, question, path):
    found = split_readings(mutant, question).get((question, f"mutant:{mutant.name}", "MaxPool"))
    assert found, f"{mutant.name}: no item of {question} shows two readings ({mutant.bug})"
    assert any(path in only for _, only in found.values()), f"{mutant.name}: {path} is not singled out: {found}"
    # each reading is allowed: no item of the question may fail (the mutant reads only that question
    # otherwise; test_the_suite_catches_the_mutant runs its kin over every item)
    assert not [item.id for item in items_of(question)
                if evaluate(item, MutantBackend(mutant), seed=0, registry=REGISTRY).outcome in (Outcome.FAIL, Outcome.ERROR)]
    intact = PathMutant("intact", "the reference itself", lambda model, inputs: Call(model, inputs).reference())
    assert not split_readings(intact, question), "the reference reads each question one way"

"""Deliberately broken variants of the reference backend, each a bug real runtimes have had or
could plausibly have: every defect model of the product's library (conformance/judge/analysis/models/,
the models a failed item is diagnosed with), the refusals and acceptances no output can show, and
the reference following a reading of a question the documents settle (``resolved`` in the
registry): another reading of such a question is a wrong answer. The suite's expectations come
from the intact reference."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.judge.analysis.catalogue import DEFECTS
from conformance.judge.analysis.models.kit import pooled, variant
from conformance.load.cases import bundled_case_dir, load_registry
from conformance.semantics import QUESTIONS
from reference_backend import ReferenceBackend


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    backend: type[ReferenceBackend]


def _refuse_empty_batch(x, axes, storage_order, pool):
    if x.shape[0] == 0:
        raise RuntimeError("empty batch")
    return pool(x, axes, storage_order)


def _other_readings_of_settled_questions() -> list[Mutant]:
    """Each reading of a question the documents settle, other than theirs: a wrong answer."""
    registry = load_registry(bundled_case_dir())
    return [Mutant(f"{key}:{reading}", registry[key].interpretations[reading],
                   ReferenceBackend.configured(f"{key}:{reading}"))
            for key, readings in QUESTIONS.items() if registry[key].status == "resolved"
            for reading in readings if reading != registry[key].reference]


# Defect models each of whose answers is a reading of an open question: alone they are divergent,
# not wrong (NaN from a window's first element only: nan-in-window read per element), and are
# diagnosed beside another bug (tests/meta/test_diagnosis.py: tinygrad's Indices beside it).
READINGS_ONLY = {"nan_only_from_the_first_element"}

MUTANTS = [Mutant(d.name, d.title, d.backend) for d in DEFECTS if d.name not in READINGS_ONLY] + [
    Mutant("empty_batch_refused", "an input with N = 0 raises", pooled(_refuse_empty_batch)),
    Mutant("attributes_not_validated", "models with impossible or unknown attributes are run anyway",
           variant(validate=lambda cls, node, proto: None)),
    Mutant("element_types_not_checked", "element types a version does not allow are run anyway",
           variant(check_type=lambda cls, node, x: None)),
] + _other_readings_of_settled_questions()

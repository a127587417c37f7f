"""Output sizes whose numerator is negative and not a multiple of the stride: the only place where
the documents' floor and ceil and C's truncating division differ (maxpool_edges.yaml,
negative_span_not_a_multiple_of_the_stride). A runtime that truncates is caught by those items
alone: elsewhere its sizes, and so its outputs, are the reference's."""

from __future__ import annotations

import pytest

from conformance.backends import load_backend
from conformance.judge.verdict import evaluate
from conformance.outcomes import Outcome
from conformance.semantics import GeometryError, node_axes
from tests.support.bundled import bundled_items, bundled_registry
from tests.meta.support.faulty_backends import truncated_output_sizes

CASE = "negative_span_not_a_multiple_of_the_stride"


def _truncation_differs(item) -> bool:
    case = item.case
    if case.op != "MaxPool" or case.domain != "ai.onnx" or case.reject or case.upstream:
        return False
    spatial = item.inputs[0].spec.shape[2:]
    try:
        documented = [a.out for a in node_axes(case.domain, case.attributes, spatial)]
    except (GeometryError, KeyError, TypeError):
        return False
    return truncated_output_sizes(case.attributes, spatial) != documented


@pytest.fixture(scope="module")
def items():
    return bundled_items()


def test_truncating_division_changes_sizes_only_in_the_negative_numerator_case(items):
    differing = {i.id for i in items if _truncation_differs(i)}
    assert differing and all(f"/{CASE}/" in i for i in differing)
    # every geometry of the case is one where truncation differs, at every version that has it
    mine = [i for i in items if i.case.name.startswith(f"{CASE}/") and i.case.domain == "ai.onnx"]
    labels = {i.id.split("/")[2].split("-")[0] for i in mine}
    assert labels == {i.split("/")[2].split("-")[0] for i in differing if "window_of_elements" not in i} | \
        {"ceil_1d_k3_s2_window_of_elements"}
    assert {i.version for i in mine} == {1, 8, 10, 11, 12, 22}


def test_a_runtime_that_divides_with_truncation_fails_those_items(items):
    backend = load_backend("tests.meta.support.faulty_backends:DividesWithTruncation")
    registry = bundled_registry()
    caught = [i for i in items if _truncation_differs(i) and i.version in (1, 12)]
    verdicts = {i.id: evaluate(i, backend, 0, registry) for i in caught}
    assert caught and all(v.outcome is Outcome.FAIL for v in verdicts.values()), \
        {k: (v.outcome, v.message) for k, v in verdicts.items() if v.outcome is not Outcome.FAIL}
    assert any("shape" in v.message for v in verdicts.values())

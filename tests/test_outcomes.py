"""The outcome vocabulary is written once (conformance/outcomes.py): the JSON Schemas, the
report's order and pytest's summary words all say the same outcomes."""

from __future__ import annotations

import json

from conformance.load.cases import SCHEMA_DIR
from conformance.outcomes import BACKEND_FAILURES, FAILING, FAILING_WORDS, REPORT_ORDER, REPORT_WORDS, Outcome
from conformance.plugin.terminal import STATUS


def _schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text())


def test_results_json_allows_exactly_the_outcomes():
    outcome = _schema("results.schema.json")["$defs"]["outcome"]
    assert sorted(outcome["enum"]) == sorted(o.value for o in Outcome)


def test_an_expectations_file_lists_exactly_the_backend_s_failures():
    entry = _schema("expectations.schema.json")["properties"]["entries"]["items"]["properties"]["outcome"]
    assert entry["enum"] == [o.value for o in BACKEND_FAILURES]


def test_the_report_shows_every_outcome_once_and_pytest_names_each():
    assert sorted(REPORT_ORDER) == sorted(Outcome) and len(set(REPORT_WORDS)) == len(Outcome)
    assert set(STATUS) == set(Outcome)
    assert FAILING_WORDS == tuple(o.value for o in FAILING) and Outcome.XPASS in FAILING

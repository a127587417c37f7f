"""The order xdist's workers take the tests in (tests/conftest.py): every entry names a test there is,
so that a renamed test does not silently fall back to the end of the run."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import COST_S, SHARED_MODULE_FIXTURES, cost_s

ROOT = Path(__file__).resolve().parents[1]


def test_every_entry_of_the_cost_table_names_a_test_file_or_function():
    for prefix in COST_S:
        file, _, name = prefix.partition("::")
        assert (ROOT / file).is_file() and f"def {name}" in (ROOT / file).read_text(), prefix
    assert all((ROOT / file).is_file() for file in SHARED_MODULE_FIXTURES)


def test_a_test_costs_the_most_of_the_entries_it_matches():
    assert cost_s("tests/meta/test_causes.py::test_causes_per_root_bug_on_a_trial_of_mutants_with_one_bug_and_several") == 40
    assert cost_s("tests/meta/test_causes.py::test_a_backend_whose_every_error_opens_with_one_line") == 15
    assert cost_s("tests/test_outcomes.py::test_anything") == 0


def test_a_file_with_a_shared_fixture_goes_to_one_worker_whole():
    """Every file that defines a module- or session-scoped fixture, found in its source."""
    assert {"tests/test_export.py", "tests/test_isolation.py", "tests/test_declared_refusals.py"} <= SHARED_MODULE_FIXTURES
    assert "tests/test_plugin.py" not in SHARED_MODULE_FIXTURES

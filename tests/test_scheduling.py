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
    assert cost_s("tests/test_reference_vs_naive.py::test_max_pool_matches_the_naive_loops") == 25
    assert cost_s("tests/test_reference_vs_naive.py::test_max_unpool_matches_the_naive_loops[11]") == 6
    assert cost_s("tests/test_outcomes.py::test_anything") == 0

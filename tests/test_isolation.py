"""A faulty backend costs one item: crash, timeout or error, and the run goes on."""

from __future__ import annotations

import json

import pytest

from conformance.plugin import PACKAGE_DIR
from tests.samples import SMALL_CASE

pytest_plugins = ["pytester"]

TWO_ITEMS = SMALL_CASE.replace("    attributes:", "    versions: [12, 22]\n    attributes:")


def run_faulty(pytester, backend, *args):
    (pytester.path / "cases").mkdir(exist_ok=True)
    (pytester.path / "cases" / "small.yaml").write_text(TWO_ITEMS)
    result = pytester.runpytest_subprocess(
        str(PACKAGE_DIR), f"--backend=tests.faulty_backends:{backend}", "--cases", str(pytester.path / "cases"),
        f"--report={pytester.path / 'out'}", "-p", "no:cacheprovider", *args)
    report = json.loads((pytester.path / "out" / "results.json").read_text())
    return result, report


@pytest.fixture
def pytester(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_DIR.parent))
    return pytester


@pytest.mark.parametrize("backend, outcome, words", [
    ("Segfaults", "crash", "killed by SIGSEGV"),
    ("Aborts", "crash", "killed by SIGABRT"),
    ("ExitsItsProcess", "crash", "exited with status 3"),
    ("ExhaustsMemory", "error", "MemoryError"),
    ("Raises", "error", "RuntimeError: kernel exploded"),
    ("ReturnsAString", "error", "returned garbage: returned str, not a list of arrays"),
    ("ReturnsLists", "error", "returned garbage: output 0 is list, not a numpy array"),
    ("ReturnsTooMany", "error", "returned garbage: returned 2 outputs for a node with 1 (Y)"),
])
def test_each_fault_costs_its_item_only(pytester, backend, outcome, words):
    result, report = run_faulty(pytester, backend, "--conformance-memory-limit=2048")
    assert [r["outcome"] for r in report["items"]] == [outcome, outcome]
    assert all(words in r["message"] for r in report["items"]), report["items"][0]["message"]
    result.stdout.fnmatch_lines([f"*2 {outcome}*"])


def test_a_hang_times_out_and_the_next_item_still_runs(pytester):
    result, report = run_faulty(pytester, "Hangs", "--conformance-timeout=2")
    assert [r["outcome"] for r in report["items"]] == ["timeout", "timeout"]
    assert "no answer within 2 s" in report["items"][0]["message"]


def test_a_crash_restarts_the_backend_for_the_next_item(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("FAULTY_MARKER", str(tmp_path / "crashed-once"))
    result, report = run_faulty(pytester, "CrashesOnTheFirstItemOnly")
    assert sorted(r["outcome"] for r in report["items"]) == ["crash", "pass"]


def test_without_isolation_garbage_is_still_an_error(pytester):
    result, report = run_faulty(pytester, "ReturnsLists", "--isolation=none")
    assert [r["outcome"] for r in report["items"]] == ["error", "error"]

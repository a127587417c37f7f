"""Shared settings for the project's own tests: the mutation self-test's summary, the order in
which xdist's workers take the tests (the longest first, so that no long test makes the tail),
and the tests that need a system tool (skipped locally without it, failed under CI)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

IN_CI = bool(os.environ.get("CI"))  # set by CI services, and by .ci/run
# pytester's in-process runs get a HOME of their own, which would give each a cold per-user cache
# of the bundled cases and a new key to seal it with (seconds per run): they keep the user's, as
# every subprocess the tests start does. The tests of that cache set their own HOME and XDG dirs.
os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
os.environ.setdefault("XDG_CONFIG_HOME", str(Path.home() / ".config"))


def requires_tool(problem: str | None):
    """A mark for a test that needs a system tool: ``problem`` says what is missing, and what
    installs it (None when nothing is). Locally the test skips with that reason; under CI, whose
    .ci/run installs every tool the tests need, it fails instead, so that a missing install step
    shows rather than hides behind a skip."""
    return pytest.mark.requires_tool(problem)


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_tool(problem): skip locally, fail under CI, when problem is not None")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("requires_tool"):
        if mark.args[0] is not None and IN_CI:
            pytest.fail(f"CI lacks a tool this test needs: {mark.args[0]} (.ci/run must install it)", pytrace=False)


def _skip_without_tools(items) -> None:
    """Locally, a skip reported at the test's own line, with what to install."""
    for item in items:
        for mark in item.iter_markers("requires_tool"):
            if mark.args[0] is not None and not IN_CI:
                item.add_marker(pytest.mark.skip(reason=mark.args[0]))

# The longest tests and files, by node id prefix, with their rough seconds on a two-core machine
# running the suite (`--durations`, 2026-12-02): they start first, the others follow in their usual order. Only the order
# depends on these figures; a stale one costs wall time, never a result.
COST_S = {
    "tests/test_export.py": 75,  # its module fixture exports the whole suite
    "tests/meta/test_causes.py::test_causes_per_root_bug": 40,
    "tests/test_isolation.py": 40,
    "tests/test_fuzz.py": 40,
    "tests/test_sweep.py": 40,
    "tests/test_vendor_guide.py::test_the_guide_s_covering": 35,
    "tests/test_declared_refusals.py": 25,
    "tests/test_untrusted_state.py": 25,
    "tests/test_reference_vs_naive.py::test_max_pool_matches_the_naive_loops": 21,
    "tests/test_vendor_guide.py::test_the_installed_wheel": 20,
    "tests/test_interrupts.py": 20,
    "tests/test_vendor_guide.py::test_the_adapter_runs": 18,
    "tests/test_registry_page.py": 18,
    "tests/test_plugin.py::test_the_reference_backend_is_green": 17,
    "tests/test_coverage.py": 16,
    "tests/test_semantics.py": 15,
    "tests/meta/test_causes.py": 15,
    "tests/test_exact_selection.py": 12,
    "tests/meta/test_mutants.py::test_the_report_names_a_question": 11,
    "tests/test_reports_survive.py": 10,
    "tests/test_vendor_experience.py::test_the_readme_results_example": 10,
}


def _files_with_shared_fixtures() -> frozenset[str]:
    """The test files that define a module- or session-scoped fixture (a whole export, the faulty
    backends' runs, a sweep's releases): one worker takes each whole, so that the fixture is built
    once, not once per worker that gets one of its tests. Read from the sources, so that a new
    such file cannot be forgotten here."""
    tests = Path(__file__).parent
    return frozenset(str(path.relative_to(tests.parent)) for path in tests.rglob("test_*.py")
                     if re.search(r"""scope=["'](module|session)["']""", path.read_text()))


SHARED_MODULE_FIXTURES = _files_with_shared_fixtures()


def cost_s(nodeid: str) -> float:
    return max((s for prefix, s in COST_S.items() if nodeid.startswith(prefix)), default=0)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: -cost_s(item.nodeid))  # stable: the others keep their order
    _skip_without_tools(items)


class LongestFirst(LoadScopeScheduling):
    """Each test a unit of its own, except the files of SHARED_MODULE_FIXTURES; units are handed out
    in collection order (the longest first), one more to a worker whenever it has two or fewer
    tests left: close to the longest-first greedy schedule."""

    def _split_scope(self, nodeid: str) -> str:
        file = nodeid.split("::", 1)[0]
        return file if file in SHARED_MODULE_FIXTURES else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: unknown under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "load":  # a --dist named on the command line is kept
        return None
    config.option.loadscopereorder = False  # xdist would otherwise put the files of many tests first
    return LongestFirst(config, log)


def pytest_terminal_summary(terminalreporter):
    """Print the mutation self-test's kill count (tests/meta/test_mutants.py records one property per mutant)."""
    results = [value for reports in terminalreporter.stats.values() for report in reports
               if getattr(report, "when", None) == "call"
               for name, value in report.user_properties if name == "mutant"]
    if not results:
        return
    killed = [r for r in results if r["killed_by"]]
    terminalreporter.section("mutation self-test")
    terminalreporter.write_line(f"{len(killed)} of {len(results)} mutants of the reference backend killed")
    for result in sorted(results, key=lambda r: r["name"]):
        terminalreporter.write_line(f"  {result['name']:<38} {result['killed_by'] or 'SURVIVED'}"[:160])

"""Shared settings for the project's own tests: the two tiers (``--tier``), the mutation
self-test's summary, how xdist's workers share the tests (one at a time, a file with a shared
fixture whole), and the tests that need a system tool (skipped locally without it, failed under CI)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

IN_CI = bool(os.environ.get("CI"))  # set by CI services, and by .ci/run
# pytester's in-process runs get a HOME of their own, which would give each a cold per-user cache
# of the bundled cases and a new key to seal it with (seconds per run): they keep the user's, as
# every subprocess the tests start does. The tests of that cache set their own HOME and XDG dirs.
os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
os.environ.setdefault("XDG_CONFIG_HOME", str(Path.home() / ".config"))
# Where Python may write no bytecode (PYTHONDONTWRITEBYTECODE, as on CI's machines and many
# containers), every Python process the tests start (a few hundred: pytest runs, xdist workers,
# backends' children) compiled the suite's 96 modules again, and pytest rewrote the test modules
# in each worker: 0.3 s of CPU per process for the suite's import alone, minutes in all. The
# tests write bytecode; the one test about a process that may not (tests/test_plugin.py) sets it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def requires_tool(problem: str | None):
    """A mark for a test that needs a system tool: ``problem`` says what is missing, and what
    installs it (None when nothing is). Locally the test skips with that reason; under CI, whose
    .ci/run installs every tool the tests need, it fails instead, so that a missing install step
    shows rather than hides behind a skip."""
    return pytest.mark.requires_tool(problem)


def pytest_addoption(parser):
    parser.addoption("--tier", choices=TIERS, default=None,
                     help="which tests run: fast (the default for a directory, as the README's test command), slow "
                          "(the tests marked slow: whole-suite runs, the installed wheel, the self-test's long "
                          "trials; .ci/run runs them after the fast ones), or all (the default where a file or a "
                          "test is named)")


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_tool(problem): skip locally, fail under CI, when problem is not None")
    config.addinivalue_line("markers", "slow: in the slow tier (--tier=slow or all): a whole-suite run, a release's "
                                       "environment, or a long trial of the self-test")


TIERS = ("fast", "slow", "all")


def tier(config) -> str:
    """The tier asked for; by default the fast one where pytest was given directories only (the
    README's ``pytest tests``), and every test where a file or a test was named, so that naming a
    slow test runs it."""
    asked = config.getoption("tier")
    if asked:
        return asked
    named = [arg for arg in config.args if "::" in arg or Path(arg.split("::", 1)[0]).is_file()]
    return "all" if named else "fast"


def _keep_the_tier(config, items) -> None:
    wanted = tier(config)
    if wanted == "all":
        return
    kept, left = [], []
    for item in items:
        (kept if (item.get_closest_marker("slow") is not None) == (wanted == "slow") else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


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

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    _keep_the_tier(config, items)
    _skip_without_tools(items)


SHARED_FIXTURE = re.compile(r"""^@pytest\.fixture\(.*scope=["'](module|session)["']""", re.MULTILINE)


def files_with_shared_fixtures(tests: Path = Path(__file__).parent) -> frozenset[str]:
    """The test files that define a module- or session-scoped fixture (the faulty backends' runs,
    the declared refusals' runs, a sweep's releases): one worker takes each whole, so that the
    fixture is built once, not once per worker that gets one of its tests (work stealing split
    them: test_isolation's run of 40 faulty backends was built three times, 45 s each). Read from
    the sources, so that a new such file cannot be forgotten here."""
    return frozenset(str(path.relative_to(tests.parent)) for path in tests.rglob("test_*.py")
                     if SHARED_FIXTURE.search(path.read_text()))


class SharedFixturesWhole(LoadScopeScheduling):
    """Each test a unit of its own, except that a file of ``files_with_shared_fixtures`` is one
    unit. xdist hands the units out largest first (the files, which hold the long fixtures; its
    default, which ``--no-loadscope-reorder`` turns off), one more to a worker whenever it has two
    or fewer tests left; no figures to go stale."""

    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.shared = files_with_shared_fixtures()

    def _split_scope(self, nodeid: str) -> str:
        file = nodeid.split("::", 1)[0]
        return file if file in self.shared else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: unknown under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """``SharedFixturesWhole`` for a plain ``-n``; a ``--dist`` named on the command line is kept."""
    if config.getoption("dist") != "load":
        return None
    return SharedFixturesWhole(config, log)


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

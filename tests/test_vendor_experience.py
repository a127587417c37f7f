"""What a runtime vendor meets first: the plugin beside other pytest plugins, usage errors in one
line with pytest's exit code, expectations that say what they matched, a fast single-item rerun."""

from __future__ import annotations

import pytest

from conformance.plugin import PACKAGE_DIR
from tests.samples import SMALL_CASE

pytest_plugins = ["pytester"]


def run_suite(pytester, *args):
    # In-process runs re-import the already imported plugin, which pytest warns cannot be rewritten.
    return pytester.runpytest(str(PACKAGE_DIR), "-W", "ignore::pytest.PytestAssertRewriteWarning", *args)


def small_cases(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "small.yaml").write_text(SMALL_CASE)
    return pytester.path / "mine"


def test_the_suite_runs_beside_pytest_timeout(pytester):
    pytest.importorskip("pytest_timeout")
    cases = small_cases(pytester)
    # A child process, as a user's run: every installed plugin loads from its entry point.
    result = pytester.runpytest_subprocess(str(PACKAGE_DIR), "-p", "timeout", "--timeout=120",
                                           "--conformance-timeout=30", "--cases", str(cases))
    assert result.ret == 0, result.stderr.str()
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["conformance backend: reference *timeout 30 s*", "timeout: 120.0s"])

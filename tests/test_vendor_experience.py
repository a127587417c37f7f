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


def test_an_adapter_with_a_syntax_error_is_one_line_and_a_usage_error(pytester):
    pytester.makepyfile(broken_adapter="class Broken(:\n    pass\n")
    pytester.syspathinsert()
    result = run_suite(pytester, "--backend=broken_adapter:Broken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --backend=broken_adapter:Broken: cannot import backend 'broken_adapter:Broken': "
                                 "SyntaxError: * (broken_adapter.py, line 1)"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_missing_or_malformed_results_file_is_one_line_and_exit_2(command, tmp_path, capsys):
    from conformance.cli import main

    (tmp_path / "truncated.json").write_text('{"schema_version": 1, "items": [')
    (tmp_path / "other.json").write_text('{"name": "not a run"}')
    for bad, says in [("missing.json", "No such file or directory"), ("truncated.json", "not JSON"),
                      ("other.json", "not a results.json of the suite (the document: 'schema_version' is a required")]:
        extra = [str(tmp_path / bad)] if command == "compare" else ["-o", str(tmp_path / "out")]
        assert main([command, str(tmp_path / bad), *extra]) == 2  # 1 stays "regression found"
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and error.startswith(f"conformance {command}: {tmp_path / bad}: {says}")

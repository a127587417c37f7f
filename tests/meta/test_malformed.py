"""Every malformed case file in tests/meta/malformed yields one error line naming file, line and field,
without a traceback, and the other case files still run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from conformance.expand.items import expand
from conformance.load.cases import CaseError, bundled_case_dir, load_case_file, load_registry
from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

pytest_plugins = ["pytester"]

CORPUS = Path(__file__).with_name("malformed")
EXPECTED = yaml.safe_load((CORPUS / "EXPECTED").read_text())


def test_the_corpus_is_large_and_every_file_has_an_expectation():
    files = sorted(p.name for p in CORPUS.glob("*.yaml"))
    assert len(files) >= 30
    assert files == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_malformed_file_gets_one_line_naming_file_line_and_field(name):
    path = CORPUS / name
    with pytest.raises(CaseError) as info:
        for case in load_case_file(path, load_registry(bundled_case_dir())):
            for item in expand(case):
                item.model
    error, want = info.value, EXPECTED[name]
    assert (error.line, error.field, error.message) == (want["line"], want["field"], want["message"])
    assert str(error) == f"{path}:{want['line']}:{' ' + want['field'] + ':' if want['field'] else ''} {want['message']}"
    assert "\n" not in str(error)


def test_the_whole_corpus_collects_beside_a_good_file_which_still_runs(pytester):
    cases = pytester.path / "cases"
    shutil.copytree(CORPUS, cases, ignore=shutil.ignore_patterns("EXPECTED"))
    (cases / "zz_good.yaml").write_text(SMALL_CASE)
    result = pytester.runpytest(str(PACKAGE_DIR), "--cases", str(cases), "-W", "ignore::pytest.PytestAssertRewriteWarning")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 6 and outcomes["errors"] == len(EXPECTED)
    output = result.stdout.str()
    assert "Traceback" not in output
    for name, want in EXPECTED.items():
        assert f"{cases / name}:{want['line']}:" in output, name

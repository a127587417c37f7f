"""CI runs exactly the README's test command, so the quickstart cannot rot unnoticed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def quickstart_commands() -> list[str]:
    quickstart = ROOT.joinpath("README.md").read_text().split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", quickstart)


def test_the_quickstart_has_a_suite_command_and_a_test_command():
    suite, tests = quickstart_commands()
    assert "pytest conformance --backend=ort" in suite and "--report reports/ort" in suite
    assert "pytest tests" in tests


def test_ci_runs_the_readme_test_command_verbatim():
    _, tests = quickstart_commands()
    ci_lines = ROOT.joinpath(".ci", "run").read_text().splitlines()
    assert tests in ci_lines
    assert any(line.startswith(".venv/bin/pytest conformance --backend=reference") for line in ci_lines)


def test_the_readme_names_every_built_in_backend():
    """The option row and the Backends table name each entry point pyproject.toml registers."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    registered = tomllib.loads(ROOT.joinpath("pyproject.toml").read_text())["project"]["entry-points"]["conformance.backends"]
    readme = ROOT.joinpath("README.md").read_text()
    option_row = next(line for line in readme.splitlines() if line.startswith("| `--backend=NAME"))
    table = readme.split("## Backends", 1)[1].split("\n## ", 1)[0]
    for name in registered:
        assert f"`{name}`" in option_row and f"| `{name}` |" in table, name


def test_the_item_counts_the_docs_give_are_today_s():
    """The number of bundled items and of the covering sample, where the README and the guides give them."""
    from conformance.docgen.coverage import covering_sample
    from tests.support.bundled import bundled_items

    items = list(bundled_items())
    total, sample = f"{len(items):,}", f"{len(covering_sample(items)):,}"
    docs = Path(__file__).parent.parent
    readme = " ".join((docs / "README.md").read_text().split())
    assert f"become {total} ONNX models" in readme and f"({sample} of {total})" in readme
    assert f"{sample} of the {total} bundled items" in " ".join((docs / "docs" / "running.md").read_text().split())
    assert f"({sample} of {total})" in " ".join((docs / "docs" / "validate-your-runtime.md").read_text().split())
    nhwc = sum(item.case.domain == "com.ms.internal.nhwc" for item in items)  # every one unsupported on pip's ORT
    assert f'"ONNX Runtime cannot run com.ms.internal.nhwc ({nhwc:,} items)"' in readme


def test_the_header_the_readme_shows_counts_today_s_ort_expectations():
    pytest.importorskip("onnxruntime")
    from conformance.backends import load_backend
    from conformance.judge.expectations import load_expectations

    ort = load_backend("ort")
    listed = load_expectations(ROOT / "expectations", "ort", details=ort.details())
    for page in (ROOT / "README.md", ROOT / "docs" / "reports.md"):
        assert f"conformance expectations of ort: expectations/ort.yaml ({len(listed.entries)} entries)" in page.read_text(), page


def test_the_example_report_s_size_is_the_one_the_readme_gives():
    """docs/example/ as regenerated (`nox -s example`): its records and its megabytes."""
    results = ROOT / "docs" / "example" / "results.json"
    records = len(json.loads(results.read_text())["items"])
    readme = " ".join(ROOT.joinpath("README.md").read_text().split())
    assert f"MaxUnpool-11: {records:,} records, {results.stat().st_size / 1e6:.1f} MB;" in readme

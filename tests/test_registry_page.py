"""The committed ambiguity page is what `conformance registry` renders today."""

from __future__ import annotations

from conformance.cases import bundled_case_dir
from conformance.cli import main
from conformance.registry_page import render


def test_the_committed_page_is_current():
    page = bundled_case_dir() / "ambiguities.md"
    assert page.read_text() == render(bundled_case_dir()), (
        "cases/ambiguities.md is stale: run `conformance registry --output cases/ambiguities.md`"
    )


def test_the_command_writes_the_page(tmp_path, capsys):
    assert main(["registry", "--output", str(tmp_path / "page.md")]) == 0
    assert (tmp_path / "page.md").read_text().startswith("# Open questions of the max-pooling documents")

"""docs/status.md's table of known failures per runtime is generated from expectations/ and current."""

from __future__ import annotations

from pathlib import Path

from conformance.docgen.status_page import render

STATUS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "status.md"
BEGIN, END = "<!-- status table: python -m conformance.docgen.status_page -->\n", "<!-- end of status table -->"


def test_the_status_table_is_current():
    text = STATUS_PAGE.read_text()
    table = text[text.index(BEGIN) + len(BEGIN): text.index(END)]
    assert table == render(), "regenerate it with `python -m conformance.docgen.status_page`"


def test_the_table_counts_each_file_s_entries_by_outcome_and_its_skips(tmp_path):
    (tmp_path / "mine.yaml").write_text("backend: mine\ntested_with: '2.0'\nentries:\n"
                                        "  - {match: 'MaxPool-1/*', outcome: fail, reason: r}\n"
                                        "  - {match: 'MaxPool-8/*', outcome: crash, reason: r}\n")
    (tmp_path / "mine.skips.yaml").write_text("backend: mine\nentries:\n  - {match: 'MaxPool-22/*', reason: hangs}\n")
    assert render(tmp_path).splitlines()[2] == "| [`mine`](../expectations/mine.yaml) | 2.0 | 2 | 1 | 0 | 1 | 0 | 1 |"

"""The crossing of behaviour classes with path selectors: every cell varies or says why, and the
README shows the table as the cases make it today."""

from pathlib import Path

from conformance.load.cases import bundled_case_dir
from conformance.report.coverage import crossing, problems, render, selectors_data

README = Path(__file__).parents[1] / "README.md"
BEGIN, END = "<!-- coverage table: conformance coverage -->\n", "<!-- end of coverage table -->"


def test_every_cell_varies_or_gives_a_reason():
    assert problems(crossing(bundled_case_dir())) == []


def test_every_selector_cites_a_source():
    for name, selector in selectors_data()["selectors"].items():
        assert selector["sources"], name
        for source in selector["sources"]:
            assert {"repo", "commit", "path", "anchor", "says"} <= set(source), (name, source)


def test_the_readme_table_is_current():
    text = README.read_text()
    table = text[text.index(BEGIN) + len(BEGIN): text.index(END)]
    assert table == render(bundled_case_dir()), "regenerate it with `conformance coverage`"

"""The crossing of behaviour classes with path selectors: every cell varies or says why, and the
docs/coverage.md shows the table as the cases make it today."""

from pathlib import Path

import pytest

from conformance.load.cases import bundled_case_dir
from conformance.docgen import axes
from conformance.docgen.coverage import crossing, problems, render, selectors_data

COVERAGE_PAGE = Path(__file__).parents[1] / "docs" / "coverage.md"
BEGIN, END = "<!-- coverage table: conformance coverage -->\n", "<!-- end of coverage table -->"


@pytest.mark.slow
def test_every_cell_varies_or_gives_a_reason():
    assert problems(crossing(bundled_case_dir())) == []


def test_every_selector_cites_a_source():
    for name, selector in selectors_data()["selectors"].items():
        assert selector["sources"], name
        for source in selector["sources"]:
            assert {"repo", "commit", "path", "anchor", "says"} <= set(source), (name, source)


@pytest.mark.slow
def test_the_readme_table_is_current():
    text = COVERAGE_PAGE.read_text()
    table = text[text.index(BEGIN) + len(BEGIN): text.index(END)]
    assert table == render(bundled_case_dir()), "regenerate it with `conformance coverage`"


AXES_BEGIN, AXES_END = "<!-- depth axes: conformance coverage -->\n", "<!-- end of depth axes -->"


@pytest.mark.slow
def test_every_empty_depth_cell_gives_a_reason():
    assert axes.problems(axes.tables(bundled_case_dir())) == []


def test_a_depth_cell_without_items_or_reason_is_reported():
    table = {"answer_values": {"MaxPool [float32]": {"lowest": 0, "highest": 3, "inf": None}}}
    assert axes.problems(table) == [
        "answer_values: MaxPool [float32] x lowest: no item and no reason in axes.answer_values.not_covered"]


@pytest.mark.slow
def test_the_readme_depth_tables_are_current():
    text = COVERAGE_PAGE.read_text()
    tables = text[text.index(AXES_BEGIN) + len(AXES_BEGIN): text.index(AXES_END)]
    assert tables == axes.render(bundled_case_dir()), "regenerate them with `conformance coverage`"


@pytest.mark.slow
def test_every_edge_value_is_some_answer_of_every_operator_and_type():
    for row, cells in axes.tables(bundled_case_dir())["answer_values"].items():
        assert all(count != 0 for count in cells.values()), row


def test_a_question_read_two_ways_on_two_paths_is_reported():
    from conformance.report.results import readings_by_path

    def record(reading, *path):
        return {"outcome": "divergent", "ambiguity": ["nan-in-window"], "backend": "b", "op": "MaxPool",
                "reading": reading, "message": "", "path": ["planes 1", *path]}
    found = readings_by_path([record("nan-ignored", "rank 2d"), record("nan-ignored", "rank 2d"),
                              record("nan-propagates", "rank 3d"), dict(record("nan-ignored"), backend="c"),
                              dict(record("nan-propagates"), op="MaxUnpool")])
    assert found == {("nan-in-window", "b", "MaxPool"): {"nan-ignored": (2, ["rank 2d"]),
                                                         "nan-propagates": (1, ["rank 3d"])}}


def test_an_item_two_readings_explain_reads_the_question_as_either():
    from conformance.report.results import readings_by_path

    def record(*readings, path="rank 2d"):
        return {"outcome": "divergent", "ambiguity": ["same-pad-negative"], "backend": "b", "op": "MaxPool",
                "reading": " or ".join(readings), "readings": {"same-pad-negative": list(readings)},
                "message": "", "path": [path]}
    consistent = [record("negative-split", "negative-split-floor"), record("negative-split"),
                  dict(record("clamp-to-zero"), readings={"same-pad-negative": ["clamp-to-zero", "negative-split"]})]
    assert readings_by_path(consistent) == {}
    split = readings_by_path(consistent + [record("clamp-to-zero", path="rank 3d")])
    assert split == {("same-pad-negative", "b", "MaxPool"): {"negative-split": (3, ["rank 2d"]),
                                                             "clamp-to-zero": (1, ["rank 3d"])}}

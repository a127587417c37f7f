"""The committed ambiguity page is what `conformance registry` renders today."""

from __future__ import annotations

import re

import pytest

from conformance.cli import main
from conformance.load.cases import bundled_case_dir, load_registry

pytestmark = pytest.mark.slow  # the slow tier (tests/conftest.py): its fixture runs every tagged item


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    """The page as the command writes it today (rendering runs every tagged item: done once)."""
    output = tmp_path_factory.mktemp("registry") / "page.md"
    assert main(["registry", "--output", str(output)]) == 0
    return output.read_text()


def test_the_committed_page_is_current(page):
    assert (bundled_case_dir() / "ambiguities.md").read_text() == page, (
        "cases/ambiguities.md is stale: run `conformance registry --output cases/ambiguities.md`"
    )


def test_the_command_writes_the_page_with_every_entry_its_reference_reading_and_consistent_counts(page):
    registry = load_registry(bundled_case_dir())
    for key, entry in registry.items():
        row = re.search(rf"^\| \[`{re.escape(key)}`\]\(#{re.escape(key)}\) \|.*\| (\d+) \|$", page, re.M)
        assert row, f"{key} has no row in the table"
        section = page.split(f"\n## {key}\n", 1)[1].split("\n## ", 1)[0]
        assert f"- `{entry.reference}` **(reference backend)**" in section
        per_case = [int(n) for n in re.findall(r"^- .+: (\d+)$", section.split("Cases (items at seed 0):")[1], re.M)]
        assert sum(per_case) == int(row.group(1)), key

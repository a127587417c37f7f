"""The figures the docs give that code can produce are produced by it: each generated block of a
page equals what its generator renders today."""

from __future__ import annotations

from pathlib import Path

from conformance.docgen import graph

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _block(page: str, begin: str, end: str) -> str:
    text = (DOCS / page).read_text()
    return text[text.index(begin) + len(begin):text.index(end)]


def test_the_architecture_page_shows_today_s_import_graph():
    shown = _block("architecture.md", "<!-- import graph: python -m conformance.docgen.graph -->\n```\n",
                   "```\n<!-- end of import graph -->")
    assert shown == graph.render(), "regenerate it with `python -m conformance.docgen.graph`"


def _text(page: str) -> str:
    return " ".join((DOCS / page).read_text().split())


def test_the_counts_the_testing_and_case_format_pages_give_are_today_s():
    import yaml

    from tests.meta.support.mutants import MUTANTS
    from tests.meta.support.mutants_depth import DEPTH_MUTANTS
    from tests.meta.support.mutants_paths import PATH_MUTANTS

    meta = Path(__file__).parent / "meta"
    testing, case_format = _text("testing.md"), _text("case-format.md")
    assert f"`tests/meta/support/mutants_depth.py` adds {len(DEPTH_MUTANTS)} broken backends" in testing
    assert f"`tests/meta/support/mutants_paths.py` adds {len(PATH_MUTANTS)} broken backends" in testing
    assert f"`tests/meta/support/mutants.py` defines {len(MUTANTS)} deliberately broken" in testing
    malformed = [p for p in (meta / "malformed").iterdir() if p.name != "EXPECTED"]
    assert f"the {len(malformed)} broken case files of `tests/meta/malformed/`" in testing
    hostile = yaml.safe_load((meta / "hostile" / "EXPECTED").read_text())
    registries = yaml.safe_load((meta / "hostile_registries" / "EXPECTED").read_text())
    assert (f"`tests/meta/hostile/` holds {len(hostile)} hostile case files and directories (with "
            f"{len(registries)} hostile registries") in case_format


def test_the_architecture_page_counts_the_locked_expectations():
    from conformance.judge.lock import lock_path, read_lock

    assert f"line per item whose expectations are derived ({len(read_lock(lock_path())):,} of them)" in \
        _text("architecture.md")


def test_the_testing_page_gives_the_fast_tier_s_share():
    from tests.support.tiers import FAST_SHARE

    words = {0.25: "a quarter", 0.5: "half"}
    assert f"the fast tier runs {words[FAST_SHARE]} of its examples or items" in _text("testing.md")


def test_the_architecture_page_counts_the_import_contracts():
    import tomllib

    words = {5: "five", 6: "six", 7: "seven", 8: "eight"}
    contracts = tomllib.loads((DOCS.parent / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"enforces {words[len(contracts)]} contracts" in _text("architecture.md")

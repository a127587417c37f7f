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

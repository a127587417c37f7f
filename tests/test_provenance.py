"""Citations point at real text: each case's example heading and each registry quote sit at the
line they cite in the seed documents (../shared/seeds, present in developer and CI checkouts)."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest

from conformance.load.cases import bundled_case_dir, load_registry
from tests.support.bundled import bundled_items

SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"
IN_CI = bool(os.environ.get("CI"))  # set by CI services, and by .ci/run
# On a workstation without the documents these tests skip; in CI they run, and fail.
pytestmark = pytest.mark.skipif(not SEEDS.is_dir() and not IN_CI, reason=f"the seed documents are not at {SEEDS}")


def test_the_seed_documents_are_there():
    """Without them every citation below would go unchecked: in CI that is a failure, not a skip."""
    assert SEEDS.is_dir(), f"the seed documents are not at {SEEDS}: CI must check the citations"
    assert cited_cases(), f"no case cites a document of {SEEDS}"


def seed_lines(document: str) -> list[str]:
    return html.unescape((SEEDS / document).read_text()).splitlines()


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def cited_cases():
    """Every bundled case that cites a seed document, once: the cases of the bundled items, read
    through the user's cache (a fresh load of every file would cost each xdist worker seconds of
    its collection). A case with no item (an example derived into NhwcMaxPool in a type it does not
    take) cites what the case it was derived from cites, which is checked."""
    cases = {(item.case.domain, item.case.op, item.case.name): item.case for item in bundled_items()}
    return [case for case in cases.values() if (SEEDS / case.provenance.get("document", "")).is_file()]


def plain(text: str) -> str:
    """Text without markdown emphasis and code marks, whitespace squashed."""
    return squash(text.replace("*", "").replace("`", ""))


@pytest.mark.parametrize("case", {(c.domain, c.op, c.name.split("/")[0]): c for c in cited_cases()}.values(),
                         ids=lambda case: f"{case.domain}.{case.op}/{case.name.split('/')[0]}")
def test_the_cited_line_holds_the_example(case):
    lines = seed_lines(case.provenance["document"])
    start = case.provenance["line"] - 1
    assert plain(case.provenance["example"]) in plain(" ".join(lines[start:start + 4]))
    assert plain(case.provenance["example"]).split(" ")[0] in plain(lines[start])


def registry_quotes():
    registry = load_registry(bundled_case_dir())
    return [(key, text) for key, entry in registry.items() for text in entry.entry["texts"]]


@pytest.mark.parametrize("key, text", registry_quotes(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_registry_quotes_the_document_at_the_cited_line(key, text):
    lines = seed_lines(text["document"])
    start = text["line"] - 1
    window = squash(" ".join(lines[start:start + 6]))
    assert squash(text["quote"]) in window, f"{key}: not at {text['document']}:{text['line']}"
    assert squash(text["quote"]).split(" ")[0] in lines[start], f"{key}: the quote does not begin on line {text['line']}"


def test_every_seed_example_of_the_onnx_documents_is_transcribed():
    cited = {(c.provenance["document"], c.provenance["example"]) for c in cited_cases()}
    for document in ("003_2dfce6e50edc0bf4.txt", "002_a8d45db0c35040ef.txt"):
        headings = {m.group(1) for m in re.finditer(r"^\*\*(_\w+)\*\*$", (SEEDS / document).read_text(), re.M)}
        assert headings and headings <= {example for doc, example in cited if doc == document}
    # The NHWC document prints the same examples again (headings without the underscore).
    nhwc = "000_2109ee78b005a1e1.txt"
    headings = {m.group(1) for m in re.finditer(r"^\*\*(maxpool_\w+)\*\*$", (SEEDS / nhwc).read_text(), re.M)}
    assert len(headings) == 15 and headings <= {example for doc, example in cited if doc == nhwc}


@pytest.mark.parametrize("document, examples", [("001_a527db407c7feece.txt", 5), ("004_ffa53f35127c706e.txt", 7)])
def test_every_example_of_the_openvino_documents_is_transcribed(document, examples):
    """Each numbered example, and each XML layer (a shape-only case), is cited at its line."""
    lines = seed_lines(document)
    cited = {c.provenance["line"] for c in cited_cases() if c.provenance.get("document") == document}
    numbered = [n for n, line in enumerate(lines, 1) if re.search(r"Example \d shows how", line)]
    layers = [n for n, line in enumerate(lines, 1) if line.strip().startswith("<data ")]
    assert len(numbered) == examples and len(layers) == 3
    assert set(numbered + layers) <= cited


def test_every_seed_document_a_case_cites_has_a_title_the_report_names():
    """A citation names the document by its title and versions, then the line and the seed file:
    "002_a8d45db0c35040ef.txt line 55" alone was a name no reader could look up."""
    from conformance.load.documents import TITLES, cited
    from conformance.report.record import item_record

    seeds = {i.case.provenance.get("document") for i in bundled_items()} & {p.name for p in SEEDS.glob("*.txt")}
    assert seeds and seeds <= set(TITLES), seeds - set(TITLES)
    rejected = next(i for i in bundled_items() if i.case.reject and i.case.provenance.get("line"))
    rule = item_record(rejected, bundled_case_dir())["rule"]
    assert rule == cited(rejected.case.provenance["document"], rejected.case.provenance["line"])
    assert rule.startswith(TITLES[rejected.case.provenance["document"]] + ", line ")

"""A self-contained HTML report of a results document: one file, no scripts, nothing fetched.

The page is templates/report.html, autoescaped; this module builds its context from the document,
the clusters and the advice (``known.report_model``), as plain values."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..outcomes import FAILING_WORDS, REPORT_WORDS, Outcome
from .causes import Cluster, failure_clusters, failing_items, undiagnosed_line
from .fuzz_section import fuzz_runs
from .known import Advice
from .plots import plots
from .record import ItemRecord, RunDocument
from .results import backends, case_class, disagreements, divergences, errata, matrix, opset_regressions, refused_whole, shorten, totals, cannot_run
from .templating import Markup, template

SHOWN_FAILURES = 400  # item ids listed in the disagreements
SHOWN_CLUSTERS = 60  # causes shown per backend: one backend's many never hide another's
SHOWN_IDS = 20  # other items named per cause
# Where a matrix count of each outcome leads
OUTCOME_SECTION = {Outcome.DIVERGENT.value: "questions", Outcome.XFAIL.value: "known", Outcome.XPASS.value: "known",
                   Outcome.UNSUPPORTED.value: "unsupported"}


def render_html(document: RunDocument, clusters: dict[str, list[Cluster]] | None = None,
                advice: dict[tuple[str, str], Advice] | None = None) -> str:
    """The report page (``clusters``: the document's failure clusters, and ``advice``, what to do
    about each, where the caller has them: ``known.report_model``)."""
    items = document["items"]
    names = backends(document)
    clusters = failure_clusters(items, document["catalogue"]) if clusters is None else clusters
    advice = advice or {}
    known_lines = {key for key, said in advice.items() if said.known}
    counted = totals(items)
    return template("report.html").render(
        names=names, header=_header(document), contents=_contents(items, names, document),
        totals=[(n, counted.get(n, Counter())) for n in names],
        plots=Markup(plots(document, clusters, known_lines)),  # matplotlib's SVG, which escapes its own text
        regressions=_regressions(items), matrix=_matrix(items, names),
        disagreements=_disagreements(items) if len(names) > 1 else None,
        failures=_failures(names, clusters, advice), fuzz=fuzz_runs(document), questions=_divergences(items),
        known=_known_failures(items), errata=errata(items), collection_errors=document["collection_errors"],
        unsupported=_unsupported(items), shown_failures=SHOWN_FAILURES, shown_ids=SHOWN_IDS, ordered=_ordered) + "\n"


def _ordered(counter: Counter) -> list[tuple[str, int]]:
    """A count's outcomes in the report's order, those with items only."""
    return [(o, counter[o]) for o in REPORT_WORDS if counter.get(o)]


def _anchor(*parts: object) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", str(p)) for p in parts)


def _contents(items: list[ItemRecord], names: list[str], document: RunDocument) -> list[tuple[str, str]]:
    sections = [("outcomes", "Outcomes"), ("plots", "Plots"), ("regressions", "Opset regressions"), ("matrix", "By operator version")]
    if len(names) > 1:
        sections.append(("disagreements", "Disagreements"))
    sections += [("failures", "Failures")] + [(_anchor("failures", n), f"· {n}") for n in names]
    sections.append(("questions", "Open questions"))
    if any(r["outcome"] in (Outcome.XFAIL.value, Outcome.XPASS.value) and r.get("expectation") for r in items):
        sections.append(("known", "Known failures"))
    sections.append(("errata", "Errata"))
    if document["collection_errors"]:
        sections.append(("collection-errors", "Case files that did not load"))
    if any(r["outcome"] == Outcome.UNSUPPORTED.value for r in items):
        sections.append(("unsupported", "Unsupported"))
    return sections


def _header(document: RunDocument) -> dict[str, Any]:
    env = document["environment"]
    partial = ""
    if document["partial"]:
        partial = "the run was interrupted" if document["interrupted"] else "the run had not finished"
    facts = (f"onnx {env['onnx']} · numpy {env['numpy']} · Python {env['python']} · {env['platform']} · "
             f"seed {env['seed']} · suite {env['suite_version']} · started {document['started']}"
             + (f" · finished {document['finished']}" if document["finished"] else ""))
    return {"facts": facts, "cases": env["cases"], "partial": partial, "cut": undiagnosed_line(document["items"]),
            "refused_whole": refused_whole(document),
            "backends": [{"name": b["name"], "version": b["version"],
                          "settings": ", ".join(f"{k} {v}" for k, v in b["details"].items())} for b in env["backends"]]}


def _regressions(items: list[ItemRecord]) -> dict[str, Any]:
    """Cases passed at one operator version and failed at another, by their pattern of outcomes."""
    found = opset_regressions(items)
    patterns: dict[tuple, list[dict[str, Any]]] = {}
    for r in found:
        patterns.setdefault((r["backend"], r["op"], r["dtype"], tuple(r["outcomes"].items())), []).append(r)
    return {"found": len(found), "patterns": [
        {"backend": backend, "op": op, "dtype": dtype, "outcomes": outcomes, "cases": cases}
        for (backend, op, dtype, outcomes), cases in sorted(patterns.items(), key=lambda kv: -len(kv[1]))]}


def _matrix(items: list[ItemRecord], names: list[str]) -> list[dict[str, Any]]:
    """Each op-version's counts per backend, each count with where it leads."""
    def links(op: str, version: int, backend: str) -> dict[str, str]:
        failing = _anchor("failures", backend, f"{op}-{version}")
        return {**OUTCOME_SECTION, **{o: failing for o in FAILING_WORDS}}

    return [{"op_version": f"{op}-{version}",
             "cells": [(per_backend.get(n, Counter()), links(op, version, n)) for n in names]}
            for (op, version), per_backend in matrix(items).items()]


def _disagreements(items: list[ItemRecord]) -> dict[str, Any]:
    found = disagreements(items)
    klass = {r["id"]: case_class(r) for r in items if "case" in r}
    patterns: dict[tuple, list[str]] = {}
    for d in found:
        patterns.setdefault((klass.get(d["id"], "?"), tuple(sorted(d["outcomes"].items()))), []).append(d["id"])
    return {"found": len(found), "agreeing": len({r["id"] for r in items}) - len(found),
            "patterns": [{"name": name, "outcomes": outcomes, "ids": ids}
                         for (name, outcomes), ids in sorted(patterns.items(), key=lambda kv: (-len(kv[1]), kv[0]))]}


# A difference map's cells, in pixels: large enough to read a plane of this many columns at a glance
# (the 9 px cells of before were too small to read), smaller only for a wide plane.
CELL_PX, WIDE_CELL_PX, WIDE_COLUMNS = 18, 12, 32


def _heatmap(diff: dict) -> dict[str, Any] | None:
    """The first 2-D plane's map of differing elements, where the text does not already name each
    of them (its shown positions)."""
    mask = diff.get("mask")
    if not mask or sum(c == "x" for row in mask for c in row) <= len(diff.get("shown", [])):
        return None
    return {"output": diff["output"], "plane": ", ".join(map(str, diff.get("plane", []))), "columns": len(mask[0]),
            "size": CELL_PX if len(mask[0]) <= WIDE_COLUMNS else WIDE_CELL_PX,
            "cells": ["x" if c == "x" else "" for row in mask for c in row]}


def _own_script(file: Any) -> str:
    """A script's link, only to a file the writer names so (a results.json read back may say anything)."""
    return str(file) if re.fullmatch(r"repro/[A-Za-z0-9_.-]+\.py", str(file or "")) else ""


def _failure(record: ItemRecord) -> dict[str, Any]:
    """An item as the page shows it: where, its setting, what differs, and how to run it again."""
    setting = None
    if "attributes" in record:
        setting = {"attributes": str(record["attributes"]),
                   "inputs": ", ".join(f"{i['name']} {i['dtype']}{i['shape']}" for i in record["inputs"])}
    twin = record.get("twin")
    return {"outcome": record["outcome"], "id": record["id"], "where": f"{record.get('file', '?')}:{record.get('line', '?')}",
            "setting": setting, "reason": record.get("reason") or record["message"],
            "diffs": [{"summary": d["summary"], "shown": d.get("shown", []), "map": _heatmap(d)} for d in record.get("diff", [])],
            "repro": record.get("repro"), "script": record.get("script"), "script_file": _own_script(record.get("script_file")),
            "twin": twin and {"id": twin["id"], "outcome": twin["outcome"], "message": twin["message"],  # the line's
                              "script": twin.get("script"), "script_file": _own_script(twin.get("script_file"))}}  # minimal valid model fails too


def _failures(names: list[str], clusters: dict[str, list[Cluster]], advice: dict[tuple[str, str], Advice]) -> dict[str, Any]:
    shown = []
    for backend in names:
        found = clusters.get(backend, [])
        shown.append({"name": backend, "anchor": _anchor("failures", backend), "count": failing_items(found),
                      "causes": len(found), "by_version": _causes_by_version(backend, found),
                      "clusters": [_cluster(backend, index, cluster, advice.get((backend, cluster.signature)))
                                   for index, cluster in enumerate(found[:SHOWN_CLUSTERS])],
                      "more_causes": max(0, len(found) - SHOWN_CLUSTERS), "more_items": failing_items(found[SHOWN_CLUSTERS:])})
    return {"total": failing_items(c for found in clusters.values() for c in found), "backends": shown}


def _causes_by_version(backend: str, found: list[Cluster]) -> list[dict[str, Any]]:
    """Per op-version, the causes with items there: where the matrix's failing counts lead."""
    at: dict[tuple[str, int], Counter] = {}
    for index, cluster in enumerate(found):
        for r in cluster.records:
            at.setdefault((r["op"], r["version"]), Counter())[index] += 1
    return [{"anchor": _anchor("failures", backend, f"{op}-{version}"), "op_version": f"{op}-{version}",
             "causes": [(_anchor("cause", backend, i), i + 1, n) for i, n in sorted(causes.items())]}
            for (op, version), causes in sorted(at.items())]


def _what_to_do(advice: Advice | None) -> dict[str, Any] | None:
    """A line's first words: known (the entries that name its cause; its items none lists) or new
    (an entry drafted to paste; none where its items carry a second cause, drafted on that cause's line)."""
    if advice is None:
        return None
    places = ", ".join(str(e.get("where") or e["match"]) for e in advice.entries[:4]) + (" …" if len(advice.entries) > 4 else "")
    cause = next((e.get("cause") or e.get("diagnosis") for e in advice.entries if e.get("cause") or e.get("diagnosis")), None)
    return {"known": advice.known, "places": places, "cause": cause, "draft": advice.draft}


def _cluster(backend: str, index: int, cluster: Cluster, advice: Advice | None = None) -> dict[str, Any]:
    smallest = cluster.smallest
    return {"anchor": _anchor("cause", backend, index), "number": index + 1,
            "outcomes": Counter(r["outcome"] for r in cluster.records), "signature": shorten(cluster.signature, 200),
            "advice": _what_to_do(advice), "spans": f"{', '.join(cluster.op_versions)} · {', '.join(cluster.dtypes)}",
            "common": ", ".join(f"{k}={v}" for k, v in cluster.common_attributes.items()),
            "details": [(shorten(detail, 200), n) for detail, n in cluster.details],  # how its items differ in detail
            "smallest": _failure(smallest), "others": [r["id"] for r in cluster.records if r is not smallest],
            # what its experiment measured, in full (the line's name is cut for display)
            "explained": (smallest.get("explanation") or {}).get("text", "")}


def _divergences(items: list[ItemRecord]) -> list[tuple[str, str, list[tuple[str, int]]]]:
    return [(key, backend, readings.most_common())
            for key, per_backend in divergences(items).items() for backend, readings in per_backend.items()]


def _known_failures(items: list[ItemRecord]) -> list[dict[str, Any]]:
    """The expectations entries this run matched, grouped by the root cause they name (an entry's
    ``cause``, else its reason): one row per cause, with its outcomes, its entries (file and line)
    and its links, however many entries and outcomes it spans."""
    grouped: dict[tuple[str, str], list[ItemRecord]] = {}
    for r in items:
        if r["outcome"] in (Outcome.XFAIL.value, Outcome.XPASS.value) and r.get("expectation"):
            known = r["expectation"]
            grouped.setdefault((r["backend"], known.get("cause") or known["reason"]), []).append(r)
    return [_known_row(backend, cause, records)
            for (backend, cause), records in sorted(grouped.items(), key=lambda kv: (kv[0][0], -len(kv[1])))]


def _known_row(backend: str, cause: str, records: list[ItemRecord]) -> dict[str, Any]:
    entries = [r["expectation"] for r in records]
    reasons = list(dict.fromkeys(e["reason"] for e in entries))
    wheres = list(dict.fromkeys(e["where"] for e in entries if e.get("where")))
    links = list(dict.fromkeys(e["link"] for e in entries if e.get("link")))
    return {"backend": backend, "outcomes": Counter(r["outcome"] for r in records),
            "cause": cause if any(e.get("cause") for e in entries) else "(no cause named)",
            "reason": reasons[0], "more_reasons": len(reasons) - 1,
            "links": [(link, _link_text(link) if _web(link) else "") for link in links[:3]],
            "entries": len(wheres), "wheres": ", ".join(wheres[:4]) + (" …" if len(wheres) > 4 else ""),
            "example": records[0]["id"]}


def _web(link: str) -> bool:
    """Only http(s) addresses become links: a results file from elsewhere may hold javascript:."""
    return link.lower().startswith(("https://", "http://"))


def _link_text(link: str) -> str:
    """owner/repo#123 for an issue, owner/repo: file#L1-L9 for a source line, else the address."""
    parts = link.split("/")
    if link.startswith("https://github.com/") and len(parts) > 6 and parts[5] in ("issues", "pull"):
        return f"{parts[3]}/{parts[4]}#{parts[6]}"
    if link.startswith("https://github.com/") and len(parts) > 7 and parts[5] == "blob":
        return f"{parts[3]}/{parts[4]}: {parts[-1]}"
    return link


def _unsupported(items: list[ItemRecord]) -> dict[str, list[tuple[str, str, int]]]:
    """The backends' refusals of what they cannot run: the valid twins refused first (the operator
    versions, element types and ranks a backend cannot run at all), then each reason."""
    grouped = Counter((r["backend"], shorten(r["message"], 140)) for r in items
                      if r["outcome"] == Outcome.UNSUPPORTED.value and not r.get("control"))
    return {"twins": [(b, twin, n) for b, found in cannot_run(items).items() for twin, n in found.items()],
            "reasons": [(b, m, n) for (b, m), n in grouped.most_common()]}

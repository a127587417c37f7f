"""The fuzz section of the Markdown summary and of the HTML page's context (results.json's ``fuzz`` list)."""

from __future__ import annotations

from typing import Any

from .record import RunDocument


def _line(run: dict[str, Any]) -> str:
    return (f"{run['backend']} {run['backend_version']}: {run['configurations']} configurations in {run['seconds']:.1f} s "
            f"({run['per_second']:.1f}/s of search), seed {run['seed']}, {len(run['clusters'])} failure clusters")


def fuzz_markdown(document: RunDocument) -> list[str]:
    runs = document.get("fuzz") or []
    if not runs:
        return []
    lines = ["", "## Fuzz (`conformance fuzz`)", ""]
    for run in runs:
        lines += [f"{_line(run)}.", ""]
        if run["clusters"]:
            lines += ["| cluster | outcome | what differs | hits | found after | matters | minimal repro |",
                      "|---|---|---|---|---|---|---|"]
        for c in run["clusters"]:
            lines.append(f"| {c['op']} [{c['dtype']}{', Indices' if c.get('indices') else ''}] | {c['outcome']} | "
                         f"{c['kind'].replace('|', '/')} | {c['hits']} | {c.get('found_after', '?')} | "
                         f"{', '.join(c['matters']) or '-'} | `{c.get('repro', c['name'])}` |")
        lines.append("")
    return lines


def fuzz_runs(document: RunDocument) -> list[dict[str, Any]]:
    """The fuzz runs as the HTML page shows them (templates/report.html): each run's line and its
    clusters, an optional field as summary.md gives it (the cluster's name where it has no repro)."""
    return [{"line": _line(run), "clusters": [
        {"op": c["op"], "dtype": c["dtype"], "indices": bool(c.get("indices")), "outcome": c["outcome"], "kind": c["kind"],
         "message": c["message"], "hits": c["hits"], "found_after": c.get("found_after", "?"), "matters": c["matters"],
         "repro": c.get("repro", c["name"]), "case_file": c.get("case_file", "")} for c in run["clusters"]]}
        for run in document.get("fuzz") or []]

"""The fuzz section of the HTML report and the Markdown summary (results.json's ``fuzz`` list)."""

from __future__ import annotations

from html import escape
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


def fuzz_html(document: RunDocument) -> str:
    runs = document.get("fuzz") or []
    if not runs:
        return ""
    parts = ["<h2 id='fuzz'>Fuzz</h2><p class='muted'>Configurations drawn by <code>conformance fuzz</code>, judged as "
             "the suite judges; each failure cluster is shrunk to a minimal case (its item is listed under Failures).</p>"]
    for run in runs:
        rows = "".join(
            f"<tr><td><code>{escape(c['op'])}</code> [{escape(c['dtype'])}{', Indices' if c.get('indices') else ''}]</td>"
            f"<td><span class='badge {escape(c['outcome'])}'>{escape(c['outcome'])}</span></td>"
            f"<td>{escape(c['kind'])}<div class='muted'>{escape(c['message'][:300])}</div></td>"
            f"<td class='n'>{c['hits']}</td><td class='n'>{c.get('found_after', '')}</td>"
            f"<td>{escape(', '.join(c['matters']) or '-')}</td>"
            f"<td><code>{escape(c.get('repro', ''))}</code><br><code>{escape(c.get('case_file', ''))}</code></td></tr>"
            for c in run["clusters"])
        table = (f"<table><tr><th>cluster</th><th>outcome</th><th>what differs</th><th>hits</th><th>found after</th>"
                 f"<th>changing this makes it pass</th><th>minimal repro</th></tr>{rows}</table>") if rows else "<p>No failure.</p>"
        parts.append(f"<h3>{escape(_line(run))}</h3>{table}")
    return "".join(parts)

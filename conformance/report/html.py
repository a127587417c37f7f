"""A self-contained HTML report of a results document: one file, no scripts, nothing fetched."""

from __future__ import annotations

import re
from collections import Counter
from html import escape
from typing import Any

from ..outcomes import FAILING_WORDS, REPORT_WORDS, Outcome
from .fuzz_section import fuzz_html
from .record import ItemRecord, RunDocument
from .results import backends, case_class, disagreements, divergences, errata, matrix, opset_regressions, refused_whole, shorten, totals, cannot_run
from .causes import Cluster, failure_clusters, failing_items, undiagnosed_line
from .known import Advice
from .plots import plots

SHOWN_FAILURES = 400  # item ids listed in the disagreements
SHOWN_CLUSTERS = 60  # causes shown per backend: one backend's many never hide another's
SHOWN_IDS = 20  # other items named per cause
# Where a matrix count of each outcome leads
OUTCOME_SECTION = {Outcome.DIVERGENT.value: "questions", Outcome.XFAIL.value: "known", Outcome.XPASS.value: "known",
                   Outcome.UNSUPPORTED.value: "unsupported"}

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2430; margin: 0; background: #fbfbfc; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 2px solid #e4e7ec; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.lede { color: #5b6474; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 12px; background: white; }
th, td { border: 1px solid #dde1e7; padding: 3px 9px; text-align: left; vertical-align: top; }
th { background: #f1f3f6; font-weight: 600; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12.5px/1.4 ui-monospace, "SFMono-Regular", Menlo, monospace; }
pre { background: #f4f5f7; padding: 8px 10px; margin: 4px 0; overflow-x: auto; white-space: pre-wrap; }
details { background: white; border: 1px solid #e4e7ec; border-radius: 4px; margin: 4px 0; padding: 4px 10px; }
summary { cursor: pointer; font-weight: 600; } .item { border-top: 1px solid #eef0f3; padding: 6px 0; }
.badge { display: inline-block; border-radius: 3px; padding: 0 6px; margin: 1px 2px; font-size: 12px; white-space: nowrap; }
.pass { background: #d8f0da; } .xfail { background: #e6ecd2; } .divergent { background: #dfe4f7; }
.unsupported { background: #eceef2; color: #4b5260; } .fail, .error, .crash, .timeout, .xpass { background: #f9d3cf; }
.crash, .timeout { font-weight: 600; } .none { color: #a0a6b1; }
.heat { display: inline-grid; gap: 1px; margin: 4px 0; padding: 2px; background: #e4e7ec; }
.heat span { width: var(--cell); height: var(--cell); background: #cfe8d0; } .heat span.x { background: #d0392b; }
nav { margin: 8px 0 0; } nav a { margin-right: 12px; } a.badge { text-decoration: none; color: inherit; }
a.badge:hover { outline: 1px solid #1d2430; } .cause { font-weight: 400; }
.muted { color: #6a7282; } .warn { background: #fff4d6; border: 1px solid #f0d48a; padding: 6px 10px; border-radius: 4px; }
"""


def render_html(document: RunDocument, clusters: dict[str, list[Cluster]] | None = None,
                advice: dict[tuple[str, str], Advice] | None = None) -> str:
    """The report page (``clusters``: the document's failure clusters, and ``advice``, what to do
    about each, where the caller has them: ``known.report_model``)."""
    items = document["items"]
    names = backends(document)
    clusters = failure_clusters(items, document["catalogue"]) if clusters is None else clusters
    advice = advice or {}
    sections = [
        _header(document),
        _contents(items, names, document),
        _totals(items, names),
        "<h2 id='plots'>Plots</h2>" + plots(document, clusters, {key for key, said in advice.items() if said.known}),
        _regressions(items),
        _matrix(items, names),
        _disagreements(items) if len(names) > 1 else "",
        _failures(items, names, clusters, advice),
        fuzz_html(document),
        _divergences(items),
        _known_failures(items),
        _errata(items),
        _collection_errors(document),
        _unsupported(items),
    ]
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>Conformance report: {escape(', '.join(names))}</title><style>{STYLE}</style></head>"
            f"<body><main>{''.join(sections)}</main></body></html>\n")


def _badge(outcome: str, count: int | str, href: str | None = None) -> str:
    if href:
        return f"<a class='badge {outcome}' href='#{escape(href)}'>{escape(str(count))} {outcome}</a>"
    return f"<span class='badge {outcome}'>{escape(str(count))} {outcome}</span>"


def _counts(counter: Counter, links: dict[str, str] | None = None) -> str:
    return ("".join(_badge(o, counter[o], (links or {}).get(o)) for o in REPORT_WORDS if counter.get(o))
            or "<span class='none'>-</span>")


def _anchor(*parts: object) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", str(p)) for p in parts)


def _contents(items: list[ItemRecord], names: list[str], document: RunDocument) -> str:
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
    links = "".join(f"<a href='#{escape(anchor)}'>{escape(title)}</a>" for anchor, title in sections)
    return f"<nav aria-label='contents'>{links}</nav>"


def _header(document: RunDocument) -> str:
    env = document["environment"]
    state = ""
    if document["partial"]:
        state = ("<p class='warn'><b>Partial report</b>"
                 + (": the run was interrupted" if document["interrupted"] else ": the run had not finished")
                 + "; not every item ran.</p>")
    cut = undiagnosed_line(document["items"])
    if cut:
        state += f"<p class='warn'>{escape(cut)}</p>"
    rows = "".join(
        f"<tr><th>{escape(b['name'])}</th><td>{escape(b['version'])}</td>"
        f"<td>{escape(', '.join(f'{k} {v}' for k, v in b['details'].items()))}</td></tr>"
        for b in env["backends"])
    facts = (f"onnx {env['onnx']} · numpy {env['numpy']} · Python {env['python']} · {env['platform']} · "
             f"seed {env['seed']} · suite {env['suite_version']} · started {document['started']}"
             + (f" · finished {document['finished']}" if document["finished"] else ""))
    whole = "".join(f"<li><b>{escape(line)}</b></li>" for line in refused_whole(document))
    return (f"<h1>ONNX max-pooling conformance</h1><p class='lede'>{escape(facts)}<br>cases: "
            f"<code>{escape(env['cases'])}</code></p>{state}"
            + (f"<ul class='refused'>{whole}</ul>" if whole else "") +
            f"<table><tr><th>backend</th><th>version</th><th>settings</th></tr>{rows}</table>")


def _totals(items: list[ItemRecord], names: list[str]) -> str:
    table = totals(items)
    rows = "".join(f"<tr><th>{escape(n)}</th><td>{_counts(table.get(n, Counter()))}</td>"
                   f"<td class='n'>{sum(table.get(n, Counter()).values())}</td></tr>" for n in names)
    return f"<h2 id='outcomes'>Outcomes</h2><table><tr><th>backend</th><th>items</th><th>total</th></tr>{rows}</table>"


def _regressions(items: list[ItemRecord]) -> str:
    found = opset_regressions(items)
    head = (f"<h2 id='regressions'>Opset regressions ({len(found)})</h2><p class='muted'>Cases a backend passes at one "
            "operator version and fails or errors at another, with the same element type; grouped by "
            "the pattern of outcomes over the versions.</p>")
    if not found:
        return head + "<p>None.</p>"
    patterns: dict[tuple, list[dict[str, Any]]] = {}
    for r in found:
        patterns.setdefault((r["backend"], r["op"], r["dtype"], tuple(r["outcomes"].items())), []).append(r)
    parts = [head]
    for (backend, op, dtype, outcomes), cases in sorted(patterns.items(), key=lambda kv: -len(kv[1])):
        badges = "".join(f"<span class='badge {o}'>{v}: {o}</span>" for v, o in outcomes)
        names = "".join(f"<li><code>{escape(c['case'])}</code> <span class='muted'>({escape(c['file'])})</span></li>"
                        for c in cases)
        parts.append(f"<details><summary>{escape(backend)} · {escape(op)} · {escape(dtype)} · {len(cases)} "
                     f"case{'s' if len(cases) != 1 else ''} {badges}</summary><ul>{names}</ul></details>")
    return "".join(parts)


def _matrix(items: list[ItemRecord], names: list[str]) -> str:
    table = matrix(items)
    header = "".join(f"<th>{escape(n)}</th>" for n in names)
    def links(op: str, version: int, backend: str) -> dict[str, str]:
        failing = _anchor("failures", backend, f"{op}-{version}")
        return {**OUTCOME_SECTION, **{o: failing for o in FAILING_WORDS}}

    rows = "".join(f"<tr><th>{escape(op)}-{version}</th>"
                   + "".join(f"<td>{_counts(per_backend.get(n, Counter()), links(op, version, n))}</td>" for n in names)
                   + "</tr>" for (op, version), per_backend in table.items())
    return (f"<h2 id='matrix'>By operator version</h2><p class='muted'>A count leads to its items: failures to "
            f"their causes at that version.</p><table><tr><th>op-version</th>{header}</tr>{rows}</table>")


def _disagreements(items: list[ItemRecord]) -> str:
    found = disagreements(items)
    agreeing = len({r["id"] for r in items}) - len(found)
    klass = {r["id"]: case_class(r) for r in items if "case" in r}
    patterns: dict[tuple, list[str]] = {}
    for d in found:
        patterns.setdefault((klass.get(d["id"], "?"), tuple(sorted(d["outcomes"].items()))), []).append(d["id"])
    parts = [f"<h2 id='disagreements'>Where the backends disagree ({len(found)})</h2><p class='muted'>{agreeing} "
             "items have the same outcome on every backend; the others, by case class and outcomes.</p>"]
    for (name, outcomes), ids in sorted(patterns.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        badges = "".join(f"<span class='badge {o}'>{escape(b)}: {o}</span>" for b, o in outcomes)
        listed = "".join(f"<li><code>{escape(i)}</code></li>" for i in ids[:SHOWN_FAILURES])
        parts.append(f"<details><summary>{escape(name)} · {len(ids)} item{'s' if len(ids) != 1 else ''} {badges}"
                     f"</summary><ul>{listed}</ul></details>")
    return "".join(parts)


# A difference map's cells, in pixels: large enough to read a plane of this many columns at a glance
# (the 9 px cells of before were too small to read), smaller only for a wide plane.
CELL_PX, WIDE_CELL_PX, WIDE_COLUMNS = 18, 12, 32


def _heatmap(diff: dict) -> str:
    """The first 2-D plane's map of differing elements, where the text does not already name each
    of them (its shown positions)."""
    mask = diff.get("mask")
    if not mask or sum(c == "x" for row in mask for c in row) <= len(diff.get("shown", [])):
        return ""
    cells = "".join(f"<span class='{'x' if c == 'x' else ''}'></span>" for row in mask for c in row)
    plane = ", ".join(map(str, diff.get("plane", [])))
    size = CELL_PX if len(mask[0]) <= WIDE_COLUMNS else WIDE_CELL_PX
    return (f"<div class='muted'>{escape(diff['output'])}[{escape(plane)}, :, :] (red: differs)</div>"
            f"<div class='heat' style='--cell: {size}px; grid-template-columns: repeat({len(mask[0])}, {size}px)'>{cells}</div>")


def _failure(record: ItemRecord) -> str:
    shown = "".join(f"<pre>{escape(d['summary'])}\n" + "\n".join(escape(s) for s in d.get("shown", [])) + "</pre>"
                    + _heatmap(d) for d in record.get("diff", []))
    if not shown:
        shown = f"<pre>{escape(record.get('reason') or record['message'])}</pre>"
    where = f"{record.get('file', '?')}:{record.get('line', '?')}"
    setting = ""
    if "attributes" in record:
        inputs = ", ".join(f"{i['name']} {i['dtype']}{i['shape']}" for i in record["inputs"])
        setting = f"<div class='muted'><code>{escape(str(record['attributes']))}</code> · {escape(inputs)}</div>"
    repro = f"<div>repro: <code>{escape(record['repro'])}</code></div>" if record.get("repro") else ""
    if record.get("script"):  # the standalone script for the runtime's developers
        # only a file the writer names so (a results.json read back may say anything)
        own = re.fullmatch(r"repro/[A-Za-z0-9_.-]+\.py", str(record.get("script_file", "")))
        link = f"<a href='{escape(record['script_file'])}'>script</a>: " if own else "script: "
        repro += f"<div>standalone {link}<code>{escape(record['script'])}</code></div>"
    twin = record.get("twin")
    if twin:  # the line's cause: its minimal valid model fails too
        own = re.fullmatch(r"repro/[A-Za-z0-9_.-]+\.py", str(twin.get("script_file", "")))
        link = f"<a href='{escape(twin['script_file'])}'>script</a>: " if own else "script: "
        repro += (f"<div>its minimal valid model <code>{escape(twin['id'])}</code> fails too, {escape(twin['outcome'])}: "
                  f"{escape(twin['message'])}</div>"
                  + (f"<div>the minimal valid model's standalone {link}<code>{escape(twin['script'])}</code></div>"
                     if twin.get("script") else ""))
    return (f"<div class='item'>{_badge(record['outcome'], '')}<code>{escape(record['id'])}</code> "
            f"<span class='muted'>({escape(where)})</span>{setting}{shown}{repro}</div>")


def _failures(items: list[ItemRecord], names: list[str], clusters: dict[str, list[Cluster]],
              advice: dict[tuple[str, str], Advice]) -> str:
    total = failing_items(c for found in clusters.values() for c in found)
    parts = [f"<h2 id='failures'>Failures ({total})</h2><p class='muted'>Each backend's failing items clustered "
             "by cause: the outcome and what differs structurally (which output and how, whether in windows over "
             "padding, or the message made generic), sub-grouped by detail (values, signs, element types). Each cause "
             "shows its smallest item, the attribute values all its items share, and the others by id.</p>"]
    for backend in names:
        found = clusters.get(backend, [])
        count = failing_items(found)
        parts.append(f"<h3 id='{_anchor('failures', backend)}'>{escape(backend)}: {count} failing item"
                     f"{'s' if count != 1 else ''}, {len(found)} cause{'s' if len(found) != 1 else ''}</h3>")
        if not found:
            parts.append("<p>None.</p>")
            continue
        parts.append(_causes_by_version(backend, found))
        parts += [_cluster(backend, index, cluster, advice.get((backend, cluster.signature)))
                  for index, cluster in enumerate(found[:SHOWN_CLUSTERS])]
        if len(found) > SHOWN_CLUSTERS:
            rest = failing_items(found[SHOWN_CLUSTERS:])
            parts.append(f"<p class='muted'>... and {len(found) - SHOWN_CLUSTERS} more causes of {rest} items "
                         "(see results.json).</p>")
    return "".join(parts)


def _causes_by_version(backend: str, found: list[Cluster]) -> str:
    """Per op-version, the causes with items there: where the matrix's failing counts lead."""
    at: dict[tuple[str, int], Counter] = {}
    for index, cluster in enumerate(found):
        for r in cluster.records:
            at.setdefault((r["op"], r["version"]), Counter())[index] += 1
    rows = "".join(
        f"<tr id='{_anchor('failures', backend, f'{op}-{version}')}'><th>{escape(op)}-{version}</th><td>"
        + " ".join(f"<a href='#{_anchor('cause', backend, i)}'>cause {i + 1}</a> ({n})" for i, n in sorted(causes.items()))
        + "</td></tr>" for (op, version), causes in sorted(at.items()))
    return (f"<details><summary class='cause'>causes by operator version</summary><table><tr><th>op-version</th>"
            f"<th>causes (items)</th></tr>{rows}</table></details>")


def _what_to_do(backend: str, advice: Advice | None) -> str:
    """A line's first words: known (the entries that name its cause; its items none lists) or new
    (an entry drafted to paste)."""
    if advice is None:
        return ""
    if advice.known:
        places = ", ".join(str(e.get("where") or e["match"]) for e in advice.entries[:4])
        cause = next((e.get("cause") or e.get("diagnosis") for e in advice.entries if e.get("cause") or e.get("diagnosis")), None)
        return (f"<p class='known'><b>Known cause</b>{f' <code>{escape(cause)}</code>' if cause else ''}: "
                f"{escape(places)}{' …' if len(advice.entries) > 4 else ''} names it, but lists none of these items "
                "(another shape, type or version): add them to it, or widen its match.</p>")
    if not advice.draft:  # its items carry a second cause, drafted on that cause's line
        return "<p class='new'><b>New</b>: no entry of the expectations names this cause.</p>"
    return (f"<p class='new'><b>New</b>: no entry of the expectations names this cause. A drafted entry, to paste "
            f"into your expectations file (expectations/&lt;backend&gt;.yaml) and give its real reason:</p>"
            f"<pre>{escape(advice.draft)}</pre>")


def _cluster(backend: str, index: int, cluster: Cluster, advice: Advice | None = None) -> str:
    records = cluster.records
    smallest = cluster.smallest
    kinds = Counter(r["outcome"] for r in records)
    spans = f"{', '.join(cluster.op_versions)} · {', '.join(cluster.dtypes)}"
    common = ", ".join(f"{k}={v}" for k, v in cluster.common_attributes.items())
    others = [r["id"] for r in records if r is not smallest]
    listed = "".join(f"<li><code>{escape(i)}</code></li>" for i in others[:SHOWN_IDS])
    more = f"<p class='muted'>... and {len(others) - SHOWN_IDS} more (see results.json).</p>" if len(others) > SHOWN_IDS else ""
    return (f"<details open id='{_anchor('cause', backend, index)}'><summary>cause {index + 1}: {_counts(kinds)} "
            f"<span class='cause'><code>{escape(shorten(cluster.signature, 200))}</code></span></summary>"
            + _what_to_do(backend, advice) +
            f"<div class='muted'>{escape(spans)}" + (f" · every item has {escape(common)}" if common else "") + "</div>"
            + _sub_groups(cluster) + _failure(smallest)
            + (f"<details><summary class='cause'>the other {len(others)} item{'s' if len(others) != 1 else ''}"
               f"</summary><ul>{listed}</ul>{more}</details>" if others else "")
            + "</details>")


def _sub_groups(cluster: Cluster) -> str:
    """How the cause's items differ in detail (values, signs, element types), where they do."""
    details = cluster.details
    if len(details) < 2:
        return ""
    rows = "".join(f"<li>{n} × <code>{escape(shorten(detail, 200))}</code></li>" for detail, n in details[:SHOWN_IDS])
    return f"<details><summary class='cause'>{len(details)} sub-groups</summary><ul>{rows}</ul></details>"


def _divergences(items: list[ItemRecord]) -> str:
    table = divergences(items)
    parts = ["<h2 id='questions'>Open questions</h2><p class='muted'>Divergent items by the question they run into and the "
             "reading each backend showed (see cases/ambiguities.md).</p>"]
    if not table:
        return "".join(parts) + "<p>None.</p>"
    rows = ""
    for key, per_backend in table.items():
        for backend, readings in per_backend.items():
            shown = "".join(f"<span class='badge divergent'>{n} {escape(reading)}</span>"
                            for reading, n in readings.most_common())
            rows += f"<tr><td><code>{escape(key)}</code></td><td>{escape(backend)}</td><td>{shown}</td></tr>"
    return "".join(parts) + f"<table><tr><th>question</th><th>backend</th><th>observed readings</th></tr>{rows}</table>"


def _errata(items: list[ItemRecord]) -> str:
    found = errata(items)
    if not found:
        return "<h2 id='errata'>Errata</h2><p>No case of this run corrects its document.</p>"
    rows = "".join(f"<tr><td><code>{escape(e['file'])}:{e['line']}</code></td><td>{escape(e['case'])}</td>"
                   f"<td>{escape(e['reason'])}</td></tr>" for e in found)
    return (f"<h2 id='errata'>Errata ({len(found)})</h2><table><tr><th>where</th><th>case</th>"
            f"<th>the document prints, and why it is wrong</th></tr>{rows}</table>")


def _known_failures(items: list[ItemRecord]) -> str:
    """The expectations entries this run matched, grouped by the root cause they name (an entry's
    ``cause``, else its reason): one row per cause, with its outcomes, its entries (file and line)
    and its links, however many entries and outcomes it spans."""
    grouped: dict[tuple[str, str], list[ItemRecord]] = {}
    for r in items:
        if r["outcome"] in (Outcome.XFAIL.value, Outcome.XPASS.value) and r.get("expectation"):
            known = r["expectation"]
            grouped.setdefault((r["backend"], known.get("cause") or known["reason"]), []).append(r)
    if not grouped:
        return ""
    rows = "".join(_known_row(backend, cause, records)
                   for (backend, cause), records in sorted(grouped.items(), key=lambda kv: (kv[0][0], -len(kv[1]))))
    return ("<h2 id='known'>Known failures</h2><p class='muted'>Items the backend's expectations file lists, "
            "by the root cause its entries name; an <code>xpass</code> is a listed failure that now passes.</p>"
            f"<table><tr><th>backend</th><th>items</th><th>cause</th><th>reason, entries</th></tr>{rows}</table>")


def _known_row(backend: str, cause: str, records: list[ItemRecord]) -> str:
    entries = [r["expectation"] for r in records]
    reasons = list(dict.fromkeys(e["reason"] for e in entries))
    wheres = list(dict.fromkeys(e["where"] for e in entries if e.get("where")))
    links = list(dict.fromkeys(e["link"] for e in entries if e.get("link")))
    shown = "".join(f" <a href='{escape(link)}'>{escape(_link_text(link))}</a>" if _web(link) else f" <code>{escape(link)}</code>"
                    for link in links[:3])
    named = cause if any(e.get("cause") for e in entries) else "(no cause named)"
    return (f"<tr><td>{escape(backend)}</td><td>{_counts(Counter(r['outcome'] for r in records))}</td>"
            f"<td><code>{escape(named)}</code></td><td>{escape(reasons[0])}"
            + (f" <span class='muted'>(and {len(reasons) - 1} more reasons)</span>" if len(reasons) > 1 else "") + shown
            + f"<br><span class='muted'>{len(wheres)} entr{'y' if len(wheres) == 1 else 'ies'}: "
            + escape(", ".join(wheres[:4]) + (" …" if len(wheres) > 4 else ""))
            + f"; e.g. <code>{escape(records[0]['id'])}</code></span></td></tr>")


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


def _collection_errors(document: RunDocument) -> str:
    errors = document["collection_errors"]
    if not errors:
        return ""
    rows = "".join(f"<li><code>{escape(e['message'])}</code></li>" for e in errors)
    return f"<h2 id='collection-errors'>Case files that did not load ({len(errors)})</h2><ul>{rows}</ul>"


def _unsupported(items: list[ItemRecord]) -> str:
    """The backends' refusals of what they cannot run: the valid twins refused first (the operator
    versions, element types and ranks a backend cannot run at all), then each reason."""
    refused = cannot_run(items)
    twins = "".join(f"<tr><td>{escape(b)}</td><td class='n'>{n}</td><td><code>{escape(twin)}</code></td></tr>"
                    for b, found in refused.items() for twin, n in found.items())
    grouped = Counter((r["backend"], shorten(r["message"], 140)) for r in items
                      if r["outcome"] == Outcome.UNSUPPORTED.value and not r.get("control"))
    if not grouped and not twins:
        return ""
    rows = "".join(f"<tr><td>{escape(b)}</td><td class='n'>{n}</td><td><code>{escape(m)}</code></td></tr>"
                   for (b, m), n in grouped.most_common())
    head = "<h2 id='unsupported'>Unsupported</h2>"
    if twins:
        head += ("<p class='muted'>What a backend cannot run at all: it refused these valid twins (a minimal valid "
                 "model of the item's operator version, element type and rank), so its refusals of their items prove "
                 "nothing.</p><table><tr><th>backend</th><th>items</th><th>valid twin refused</th></tr>"
                 f"{twins}</table>")
    return head + (f"<table><tr><th>backend</th><th>items</th><th>the backend's reason</th></tr>{rows}</table>" if rows else "")


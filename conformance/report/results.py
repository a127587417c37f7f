"""What a results document says, aggregated: the outcome matrix, opset regressions, where backends
disagree, divergences by open question, failures and errata; and its Markdown summary."""

from __future__ import annotations

import html
import json
import re
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any, Collection, Iterable

from ..load.cases import inert
from ..load.limits import ReadRefused, read_state_text
from ..load.schema_check import compile_schema
from ..outcomes import FAILING_WORDS, REPORT_WORDS, Outcome
from .fuzz_section import fuzz_markdown
from .record import BackendRecord, Environment, ItemRecord, RunDocument
from .journal import journal_document
from .causes import Cluster, diagnoses, failing_items, failure_clusters, undiagnosed_line


Record = ItemRecord
MAX_RESULTS_BYTES = 1 << 30  # a nightly run of every backend writes about 60 MB


class ResultsError(ValueError):
    """A results.json that cannot be read: missing, not JSON, or not the suite's format (one line)."""


def read_results(path: Path, max_bytes: int = MAX_RESULTS_BYTES) -> RunDocument:
    """A results.json, read as untrusted input: a regular file within ``max_bytes``, JSON
    (no nesting or integer that the parser refuses), every record valid against the schema.
    ResultsError, in one line, otherwise. A run's journal (``results.journal.jsonl``, what a killed
    run leaves) is read as the partial document it holds."""
    try:
        text = read_state_text(Path(path), max_bytes)
        document = journal_document(text.splitlines(), str(path)) if Path(path).name.endswith(".jsonl") else json.loads(text)
    except ReadRefused as e:
        raise ResultsError(e.message) from None
    except MemoryError:
        raise ResultsError(f"{path}: too large to hold in memory") from None
    except RecursionError:
        raise ResultsError(f"{path}: not JSON (nested too deep)") from None
    except ValueError as e:  # JSONDecodeError, and integers of more digits than Python converts
        raise ResultsError(f"{path}: not JSON ({str(e)[:200]})") from None
    problem = _results_check()(document, "")
    if problem is not None:
        raise ResultsError(f"{path}: not a results.json of the suite ({problem[:300]})")
    return document


@cache
def _results_schema() -> dict[str, Any]:
    return json.loads((Path(__file__).resolve().parent.parent / "schema" / "results.schema.json").read_text())


@cache
def _results_check():
    return compile_schema(_results_schema())


def load(paths: Iterable[Path]) -> RunDocument:
    """One document from one or more results.json files (their backends side by side), within
    MAX_RESULTS_BYTES in all (the same file named many times counts each time)."""
    documents, budget = [], MAX_RESULTS_BYTES
    for path in paths:
        if budget <= 0:
            raise ResultsError(f"{path}: the results files come to over {MAX_RESULTS_BYTES:,} bytes in all")
        documents.append(read_results(path, budget))
        budget -= Path(path).stat().st_size
    if len(documents) > 1:
        _label_runs(documents)
    merged = documents[0].copy()
    if len(documents) > 1:
        merged["environment"] = _with_backends(documents[0]["environment"],
                                               [b for d in documents for b in d["environment"]["backends"]])
        merged["items"] = [r for d in documents for r in d["items"]]
        merged["collection_errors"] = [e for d in documents for e in d["collection_errors"]]
        merged["partial"] = any(d["partial"] for d in documents)
        merged["summary"] = dict(Counter(r["outcome"] for r in merged["items"]))
        merged["catalogue"] = {name: entry for d in reversed(documents) for name, entry in d["catalogue"].items()}  # the first run's words first
        if any("fuzz" in d for d in documents):
            merged["fuzz"] = [run for d in documents for run in d.get("fuzz", [])]
    return merged


def uneven_items(document: RunDocument) -> str | None:
    """Where the backends side by side ran different items (a sample beside a whole run, another
    -k): a warning, one line, with each backend's count; their totals do not compare."""
    ids: dict[str, set[str]] = defaultdict(set)
    for r in document["items"]:
        ids[r["backend"]].add(r["id"])
    if len({frozenset(found) for found in ids.values()}) <= 1:
        return None
    shared = set.intersection(*ids.values())
    counts = ", ".join(f"{backend} {len(found):,}" for backend, found in ids.items())
    return (f"the runs hold different items ({counts}; {len(shared):,} in all of them): an item one run lacks is "
            f"absent from its column, and the totals do not compare")


def _label_runs(documents: list[RunDocument]) -> None:
    """Runs merged stay apart: a labelled run's backend takes its label (``ort@1.15.1``;
    ``name@label`` where the run had several backends); otherwise, where a backend's name comes
    with more than one version, each of its records and its header take ``name@version``, so
    that the report gives each release a column of its own."""
    for document in documents:
        label = document["environment"].get("label")
        if label:
            several = len(document["environment"]["backends"]) > 1
            named = {b["name"]: f"{b['name']}@{label}" if several else label for b in document["environment"]["backends"]}
            _rename(document, named)
    versions: dict[str, set[str]] = defaultdict(set)
    for document in documents:
        for backend in document["environment"]["backends"]:
            versions[backend["name"]].add(str(backend["version"]))
    shared = {name for name, found in versions.items() if len(found) > 1}
    for document in documents:
        _rename(document, {b["name"]: f"{b['name']}@{b['version']}" for b in document["environment"]["backends"]
                           if b["name"] in shared})


def as_backend(document: RunDocument, name: str, path: Path) -> RunDocument:
    """A copy of a run of one backend with that backend named ``name`` (two backends compared as
    one: ``conformance compare A B --as NAME``); ResultsError where the run has several."""
    backends = [b["name"] for b in document["environment"]["backends"]]
    if len(backends) != 1:
        raise ResultsError(f"{path}: --as compares runs of one backend each; this run has {len(backends)} "
                           f"({', '.join(backends)})")
    copy = document.copy()
    _rename(copy, {backends[0]: name})
    return copy


def _rename(document: RunDocument, names: dict[str, str]) -> None:
    """The backends named in ``names`` renamed, in the header and in each of their records."""
    document["environment"] = _with_backends(document["environment"], [
        BackendRecord(**{**b, "name": names.get(b["name"], b["name"])})
        for b in document["environment"]["backends"]])
    items = []
    for record in document["items"]:
        if record["backend"] in names:
            record = record.copy()
            record["backend"] = names[record["backend"]]
        items.append(record)
    document["items"] = items


def _with_backends(environment: Environment, backends: list[BackendRecord]) -> Environment:
    copy = environment.copy()
    copy["backends"] = backends
    return copy


def shorten(text: str, width: int) -> str:
    """``text`` cut for display at a word boundary within ``width`` characters (results.json keeps it whole)."""
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[width // 2:] else cut).rstrip(" ,;:") + "…"


def shorten_keeping_names(signature: str, width: int, names: Collection[str]) -> str:
    """A line's signature cut for display, its "(model names)" kept: a diagnosed line's title may
    run long, and the names are what a reader looks up. What lies between the first title and the
    names (a second title, a count) gives way first. Only a group of ``names`` (the diagnoses its
    items carry) is kept: "(n, c)" or "(std::max)" in a title is prose."""
    groups = [m for m in re.finditer(r" \(([^()]*)\)", signature)
              if all(part in names for part in m.group(1).split(", "))]
    # every model named: a line reproduced by either of two models ("A (a); or B (b)") keeps both
    # names after the first title, never the second model's name alone after the first's title
    kept = " (" + "; ".join(m.group(1) for m in groups) + ")"
    if len(signature) <= width or not groups or len(kept) > width // 2:
        return shorten(signature, width)
    return shorten(signature[:groups[0].start()], width - len(kept)) + kept


def named_on(cluster: Cluster) -> set[str]:
    """Every name a line's items are diagnosed by: each diagnosis, each of its models, each retyping."""
    found = {d.name for r in cluster.records for d in diagnoses(r)}
    found |= {m.spelled for r in cluster.records for d in diagnoses(r) for m in d.models}
    return found | {name for r in cluster.records for name in r.get("retyped") or []}


def backends(document: RunDocument) -> list[str]:
    return [b["name"] for b in document["environment"]["backends"]]


def case_class(record: Record) -> str:
    return record["case"].split("/")[0]


def matrix(items: list[Record]) -> dict[tuple[str, int], dict[str, Counter]]:
    table: dict[tuple[str, int], dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in items:
        table[r["op"], r["version"]][r["backend"]][r["outcome"]] += 1
    return {key: dict(value) for key, value in sorted(table.items())}


def opset_regressions(items: list[Record]) -> list[dict[str, Any]]:
    """Cases a backend passes at one op version and fails or errors at another (same element type)."""
    groups: dict[tuple, dict[int, str]] = defaultdict(dict)
    for r in items:
        if "case" in r:
            key = (r["backend"], r["op"], r["file"], r["case"], r["inputs"][0]["dtype"] if r["inputs"] else "")
            groups[key][r["version"]] = r["outcome"]
    found = []
    for (backend, op, file, case, dtype), by_version in sorted(groups.items()):
        outcomes = set(by_version.values())
        if Outcome.PASS.value in outcomes and outcomes & set(FAILING_WORDS):
            found.append({"backend": backend, "op": op, "file": file, "case": case, "dtype": dtype,
                          "outcomes": dict(sorted(by_version.items()))})
    return found


def cannot_run(items: list[Record]) -> dict[str, dict[str, int]]:
    """Per backend, the valid twins it refused (what it cannot run at all: an operator version,
    element type and rank), each with the number of items it made unsupported."""
    found: dict[str, Counter] = defaultdict(Counter)
    for r in items:
        if r.get("control"):
            found[r["backend"]][r["control"]] += 1
    return {backend: dict(sorted(twins.items())) for backend, twins in sorted(found.items())}


_TWIN = re.compile(r"^(?P<op>.+)-(?P<version>\d+)/valid_twin/rank(?P<rank>\d+)-[^\[]*\[(?P<dtype>[^\]]+)\]$")


def refused_whole(document: RunDocument) -> list[str]:
    """One sentence per domain a backend ran none of (every item unsupported: its valid twins
    declared refused), else per operator and its versions that it ran none of, with the items that
    made unsupported: "ONNX Runtime cannot run com.ms.internal.nhwc (3,833 items)". The biggest fact
    of a run, which a list of twins' ids hides (pip's ONNX Runtime: a quarter of the suite)."""
    titles = {b["name"]: b.get("title") or b["name"] for b in document["environment"]["backends"]}
    per_domain: dict[tuple[str, str], Counter] = defaultdict(Counter)
    per_version: dict[tuple[str, str, str], dict[int, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in document["items"]:
        domain = r.get("domain", "ai.onnx")
        per_domain[r["backend"], domain][r["outcome"]] += 1
        per_version[r["backend"], domain, r["op"]][r["version"]][r["outcome"]] += 1
    unsupported = Outcome.UNSUPPORTED.value
    lines = []
    for (backend, domain), counts in sorted(per_domain.items()):
        title = titles.get(backend, backend)
        if counts[unsupported] == sum(counts.values()):
            lines.append(f"{title} cannot run {domain} ({counts[unsupported]:,} item{'s' if counts[unsupported] != 1 else ''})")
            continue
        for (b, d, op), versions in sorted(per_version.items()):
            whole = [v for v, c in sorted(versions.items()) if (b, d) == (backend, domain) and c[unsupported] == sum(c.values())]
            if whole:
                n = sum(versions[v][unsupported] for v in whole)
                lines.append(f"{title} cannot run {op}-{', '.join(map(str, whole))} ({n:,} item{'s' if n != 1 else ''})")
    return lines


def cannot_run_lines(items: list[Record]) -> list[str]:
    """One line per backend and operator for the versions whose refused valid twins have the same
    ranks and element types: what it cannot run, and how many items that made unsupported."""
    lines = []
    for backend, twins in cannot_run(items).items():
        per_version: dict[tuple[str, int], tuple[set[int], set[str], list[int]]] = {}
        for twin, n in twins.items():
            found = _TWIN.match(twin)
            if found:
                ranks, dtypes, count = per_version.setdefault((found["op"], int(found["version"])), (set(), set(), [0]))
                ranks.add(int(found["rank"]))
                dtypes.add(found["dtype"])
                count[0] += n
        merged: dict[tuple[str, tuple[int, ...], tuple[str, ...]], tuple[list[int], list[int]]] = {}
        for (op, version), (ranks, dtypes, count) in sorted(per_version.items()):
            versions, total = merged.setdefault((op, tuple(sorted(ranks)), tuple(sorted(dtypes))), ([], [0]))
            versions.append(version)
            total[0] += count[0]
        for (op, rank_list, type_list), (versions, total) in merged.items():
            lines.append(f"{backend}: {op}-{', '.join(map(str, versions))} at rank {', '.join(map(str, rank_list))} "
                         f"({', '.join(type_list)}): {total[0]} item{'s' if total[0] != 1 else ''} unsupported")
    return lines


def disagreements(items: list[Record]) -> list[dict[str, Any]]:
    """Items whose outcome differs between backends (only runs with several backends)."""
    by_id: dict[str, dict[str, str]] = defaultdict(dict)
    for r in items:
        by_id[r["id"]][r["backend"]] = r["outcome"]
    return [{"id": item_id, "outcomes": outcomes} for item_id, outcomes in sorted(by_id.items())
            if len(outcomes) > 1 and len(set(outcomes.values())) > 1]


def observed_reading(record: Record) -> str:
    """The reading a divergent item showed: its ``reading``; in a results.json written before
    items carried it, the one its message names ("observed: X ...")."""
    if "reading" in record:
        return record["reading"]
    match = re.match(r"observed: (refused|not [^(]+|[^(]+)", record["message"])
    return match.group(1).strip() if match else record["message"]


def divergences(items: list[Record]) -> dict[str, dict[str, Counter]]:
    """For each open question: per backend, how many items showed each reading."""
    table: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in items:
        if r["outcome"] == Outcome.DIVERGENT.value:
            for key in r.get("ambiguity") or ["(untagged)"]:
                table[key][r["backend"]][observed_reading(r)] += 1
    return {key: dict(value) for key, value in sorted(table.items())}


def readings_by_path(items: list[Record]) -> dict[tuple[str, str, str], dict[str, tuple[int, list[str]]]]:
    """(question, backend, operator) -> reading -> (items, the path values all of that reading's items
    take and the items of no other reading all take), where no one reading of a question is consistent with every divergent item of one
    operator on a backend: a kernel that reads the question one way on one path and another way on
    another is a bug even when each reading is allowed (operators are told apart: each has kernels
    of its own). An item whose outputs two readings give is consistent with both."""
    grouped: dict[tuple[str, str, str], list[tuple[frozenset[str], Record]]] = defaultdict(list)
    for r in items:
        if r["outcome"] == Outcome.DIVERGENT.value:
            for key in r.get("ambiguity") or []:
                grouped[key, r["backend"], r.get("op", "")].append((frozenset(_readings_of(r, key)), r))
    found = {}
    for (key, backend, op), observed in sorted(grouped.items()):
        if frozenset.intersection(*(candidates for candidates, _ in observed)):
            continue
        paths: dict[str, list[set[str]]] = defaultdict(list)
        left = observed
        while left:  # the reading most of the items left are consistent with takes them
            counts = Counter(reading for candidates, _ in left for reading in candidates)
            reading = min(counts, key=lambda name: (-counts[name], name))
            paths[reading] += [set(r.get("path", ())) for candidates, r in left if reading in candidates]
            left = [(candidates, r) for candidates, r in left if reading not in candidates]
        common = {reading: set.intersection(*sets) for reading, sets in paths.items()}
        found[key, backend, op] = {
            reading: (len(sets), sorted(common[reading].difference(*(c for other, c in common.items() if other != reading))))
            for reading, sets in paths.items()}
    return found


def _readings_of(record: Record, key: str) -> list[str]:
    """The readings of ``key`` a divergent record is consistent with (a results.json written before
    records carried them per question: its one observed reading)."""
    return record.get("readings", {}).get(key) or [observed_reading(record)]


def errata(items: list[Record]) -> list[dict[str, Any]]:
    seen = {}
    for r in items:
        if r.get("erratum"):
            seen[r["file"], case_class(r)] = {"file": r["file"], "case": case_class(r), "line": r.get("line"),
                                              "reason": r["erratum"]}
    return list(seen.values())


def totals(items: list[Record]) -> dict[str, Counter]:
    table: dict[str, Counter] = defaultdict(Counter)
    for r in items:
        table[r["backend"]][r["outcome"]] += 1
    return dict(table)


def render_markdown(document: RunDocument, clusters: dict[str, list[Cluster]] | None = None,
                    advice: dict[tuple[str, str], Any] | None = None) -> str:
    """A summary for CI logs: totals, regressions, failures by class, open questions."""
    items = document["items"]
    env = document["environment"]
    lines = ["# Conformance summary", ""]
    if document["partial"]:
        lines += ["**Partial run**" + (" (interrupted)" if document["interrupted"] else "") + ": not every item ran.", ""]
    lines.append(", ".join(f"{b['name']} {b['version']}" for b in env["backends"])
                 + f"; onnx {env['onnx']}, numpy {env['numpy']}, seed {env['seed']}")
    for line in refused_whole(document):  # the run's biggest fact, before any count
        lines += ["", f"**{line}.**"]
    lines += ["", "| backend | " + " | ".join(REPORT_WORDS) + " | total |", "|---" * (len(REPORT_WORDS) + 2) + "|"]
    for backend, counts in totals(items).items():
        lines.append(f"| {backend} | " + " | ".join(str(counts.get(o, 0)) for o in REPORT_WORDS)
                     + f" | {sum(counts.values())} |")
    cut = undiagnosed_line(items)
    if cut:
        lines += ["", cut]
    refused = cannot_run_lines(items)
    if refused:
        lines += ["", "## What the backends cannot run at all (the valid twins they declared they cannot run)", ""]
        lines += [f"- {line}" for line in refused]
    regressions = opset_regressions(items)
    lines += ["", f"## Opset regressions ({len(regressions)})", ""]
    for r in regressions:
        shown = ", ".join(f"{v}: {o}" for v, o in r["outcomes"].items())
        lines.append(f"- {r['backend']}: {r['op']} {r['case']} [{r['dtype']}]: {shown}")
    clusters = failure_clusters(items, document["catalogue"]) if clusters is None else clusters
    lines += ["", f"## Failures ({failing_items(c for cs in clusters.values() for c in cs)}), by cause", ""]
    for backend, found in clusters.items():
        for cluster in found:
            said = (advice or {}).get((backend, cluster.signature))
            state = "" if said is None else "known, not listed: " if said.known else "new: "
            lines.append(f"- {backend}: {state}{len(cluster.records)} × {shorten_keeping_names(cluster.signature, 160, named_on(cluster))} "
                         f"(e.g. `{cluster.smallest['id']}`)")
            if said is not None and said.known:
                lines.append("  - named by " + ", ".join(str(e.get("where") or e["match"]) for e in said.entries[:4]))
            if len(cluster.details) > 1:
                lines += [f"  - {n} × {shorten(detail, 160)}" for detail, n in cluster.details[:8]]
    if document["collection_errors"]:
        lines += ["", "## Case files that did not load", ""]
        lines += [f"- {e['message']}" for e in document["collection_errors"]]
    lines += ["", "## Open questions (divergent items by observed reading)", ""]
    for key, per_backend in divergences(items).items():
        for backend, readings in per_backend.items():
            lines.append(f"- {key} ({backend}): " + ", ".join(f"{n} {reading}" for reading, n in readings.most_common()))
    split = readings_by_path(items)
    if split:
        lines += ["", "## Open questions read differently on different paths", ""]
    for (key, backend, op), by_reading in split.items():
        shown = "; ".join(f"{reading} on {n} items" + (f" (all on {', '.join(only)})" if only else "")
                          for reading, (n, only) in by_reading.items())
        lines.append(f"- {key} ({backend}, {op}): {shown}")
    lines += fuzz_markdown(document)
    # A backend's words (a message, a cause) may hold HTML, which a Markdown viewer would render:
    # the summary's own Markdown uses no HTML, so escaping all of it leaves that intact.
    return html.escape(inert("\n".join(lines)), quote=False) + "\n"

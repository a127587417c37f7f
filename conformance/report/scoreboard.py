"""The scoreboard of a sweep: one static page (index.html, no script, nothing fetched) and its JSON.

- regressions between consecutive releases of each runtime, at the top;
- a grid of runtime x release (newest first) x operator version, with outcome counts;
- per cause (the report's failure lines: a defect model where one reproduces the items, else the
  runtime's own diagnostic), the releases that have it: first seen, last seen, fixed in;
- each runtime's outcomes over its releases, and over the nightlies of the history file, as
  SVG drawn by matplotlib.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from packaging.version import InvalidVersion, Version

from ..load.cases import inert
from ..load.limits import ReadRefused, read_regular
from ..outcomes import BACKEND_FAILURES, REPORT_WORDS, Outcome
from .record import BackendRecord, ItemRecord, RunDocument
from .results import MAX_RESULTS_BYTES, ResultsError, read_results, shorten
from .causes import failure_clusters
from .templating import Markup, template
from ..atomic import write_atomically

MAX_HISTORY_BYTES = 16 * 1024 * 1024
WRONG = {o.value for o in BACKEND_FAILURES}


def _release_order(version: str):
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


class Run:
    """One backend's results at one release (a sweep's cell, or one backend of a nightly's run)."""

    def __init__(self, path: Path, document: RunDocument, backend: BackendRecord, several: bool):
        self.runtime = backend["name"]
        self.release = str(backend["version"])
        label = document["environment"].get("label")
        self.label = (f"{self.runtime}@{label}" if several else label) if label else f"{self.runtime}@{self.release}"
        self.path = path
        items = [r for r in document["items"] if r["backend"] == self.runtime]
        # a known failure (xfail) is the failure its expectation lists: the cause is there all the same
        self.records = [_as_listed(r) if r["outcome"] == Outcome.XFAIL.value and isinstance(r.get("expectation"), dict)
                        else r for r in items]
        self.summary = Counter(r["outcome"] for r in items)
        self.catalogue = document["catalogue"]


def _as_listed(record: ItemRecord) -> ItemRecord:
    """A known failure's record with the outcome its expectation lists."""
    copy = record.copy()
    copy["outcome"] = record["expectation"]["outcome"]
    return copy


def runs_of(path: Path, max_bytes: int = MAX_RESULTS_BYTES) -> list[Run]:
    document = read_results(path, max_bytes)
    backends = document["environment"]["backends"]
    return [Run(path, document, backend, len(backends) > 1) for backend in backends]


def all_runs(results: Iterable[Path]) -> list[Run]:
    """The runs of every results file, within MAX_RESULTS_BYTES in all (as ``report`` reads them):
    a sweep directory planted with many large files is refused, not read for hours."""
    runs, budget = [], MAX_RESULTS_BYTES
    for path in results:
        if budget <= 0:
            raise ResultsError(f"{path}: the results files come to over {MAX_RESULTS_BYTES:,} bytes in all")
        runs += runs_of(path, budget)
        budget -= Path(path).stat().st_size
    return runs


def _op_version(record: ItemRecord) -> str:
    return f"{record['op']}-{record['version']}"


def build(runs: list[Run], failed_cells: list[dict[str, Any]], history: list[dict[str, Any]]) -> dict[str, Any]:
    by_runtime: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_runtime[run.runtime].append(run)
    runtimes = {}
    for runtime, found in sorted(by_runtime.items()):
        found.sort(key=lambda r: _release_order(r.release))
        runtimes[runtime] = {
            "releases": [r.release for r in found],
            "grid": {r.release: {ov: dict(Counter(x["outcome"] for x in records)) for ov, records in _by_op_version(r).items()}
                     for r in found},
            "summary": {r.release: dict(r.summary) for r in found},
            "causes": _causes(found),
            "regressions": _regressions(found),
        }
    return {"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runtimes": runtimes,
            "cells_not_run": failed_cells, "history": history}


def _by_op_version(run: Run) -> dict[str, list[ItemRecord]]:
    grouped: dict[str, list[ItemRecord]] = defaultdict(list)
    for record in run.records:
        grouped[_op_version(record)].append(record)
    return dict(sorted(grouped.items()))


def _causes(runs: list[Run]) -> list[dict[str, Any]]:
    """Each failure line's releases, oldest first: where it was first and last seen, and what its
    items of the last became in the next release: all passing there, it is "fixed in" that
    release; some still failing, under another line, it "changed in" it (a reworded message, a bug
    that now shows otherwise), with how many still fail; no next release, neither."""
    seen: dict[str, dict[str, Any]] = {}
    for index, run in enumerate(runs):
        for clusters in failure_clusters(run.records, run.catalogue).values():
            for cluster in clusters:
                cause = seen.setdefault(cluster.signature, {"signature": cluster.signature, "releases": {}, "example": None})
                cause["releases"][run.release] = len(cluster.records)
                smallest = cluster.smallest
                cause["example"] = {"release": run.release, "id": smallest["id"], "script": smallest.get("script"),
                                    "reason": (smallest.get("expectation") or {}).get("reason")}
                cause["items"] = [r["id"] for r in cluster.records]
                cause["last_index"] = index
                cause.setdefault("first_index", index)
    causes = []
    for cause in seen.values():
        first, last, items = cause.pop("first_index"), cause.pop("last_index"), cause.pop("items")
        cause["first_seen"], cause["last_seen"] = runs[first].release, runs[last].release
        cause["fixed_in"] = cause["changed_in"] = None
        if last + 1 < len(runs):
            after = {r["id"]: r["outcome"] for r in runs[last + 1].records}
            failing = sum(1 for i in items if after.get(i) in WRONG)
            cause["fixed_in" if not failing else "changed_in"] = runs[last + 1].release
            cause["still_failing"] = failing
        cause["gaps"] = [r.release for r in runs[first:last + 1] if r.release not in cause["releases"]]
        causes.append(cause)
    return sorted(causes, key=lambda c: (c["fixed_in"] is not None or c["changed_in"] is not None,
                                         -max(c["releases"].values()), c["signature"]))


def _regressions(runs: list[Run]) -> list[dict[str, Any]]:
    """Items that pass in a release and fail in the next, per consecutive pair, by cause."""
    found = []
    for older, newer in zip(runs, runs[1:]):
        passed = {r["id"] for r in older.records if r["outcome"] == Outcome.PASS.value}
        broken = [r for r in newer.records if r["id"] in passed and r["outcome"] in WRONG]
        if not broken:
            continue
        lines = [{"signature": c.signature, "items": len(c.records), "example": c.smallest["id"]}
                 for clusters in failure_clusters(broken, newer.catalogue).values() for c in clusters]
        found.append({"from": older.release, "to": newer.release, "items": len(broken), "causes": lines})
    return found


def _known_reasons(board: dict[str, Any], directory: Path) -> None:
    from ..judge.expectations import load_expectations

    for runtime, data in board["runtimes"].items():
        listed = load_expectations(directory, runtime)
        if listed is None:
            continue
        for cause in data["causes"]:
            entry = listed.find(cause["example"]["id"])
            if entry is not None and not cause["example"].get("reason"):
                cause["example"].update(reason=entry.reason, link=entry.link, cause=entry.cause)


def read_history(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not os.path.lexists(path):
        return []
    try:  # a regular file within the bound: a FIFO in its place is refused at once, never waited on
        data = read_regular(path, MAX_HISTORY_BYTES, follow_links=False)
    except ReadRefused as e:
        raise ResultsError(f"{path}: {e.message.removeprefix('cannot be read: ')}") from None
    entries = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise ResultsError(f"{path}:{number}: not a JSON line") from None
        if not (isinstance(entry, dict) and isinstance(entry.get("label"), str) and isinstance(entry.get("summary"), dict)
                and isinstance(entry.get("when"), str)):
            raise ResultsError(f"{path}:{number}: a history line has when, label and summary")
        if not (len(entry["label"]) <= MAX_LABEL and len(entry["when"]) <= MAX_LABEL
                and all(isinstance(k, str) and _a_count(v) for k, v in entry["summary"].items())):
            raise ResultsError(f"{path}:{number}: a history line's summary holds counts (whole numbers from 0 to "
                               f"{MAX_COUNT:,}), its when and label at most {MAX_LABEL} characters")
        entries.append(entry)
    return entries


MAX_COUNT = 10**9  # items of one run: a suite of 16,000, many times over
MAX_LABEL = 200
# What one page plots: the newest of each, so that a long history draws in seconds, not minutes
# (2,000 labels took 137 s); the page says what it left out.
MAX_SERIES = 12
MAX_NIGHTLIES = 60
MAX_RELEASES = 40


def _a_count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_COUNT


def append_history(path: Path, runs: list[Run]) -> list[dict[str, Any]]:
    """The history with this sweep's runs added (one line each), as written to ``path``."""
    entries = read_history(path)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    added = [{"when": when, "label": r.label, "runtime": r.runtime, "release": r.release, "summary": dict(r.summary)}
             for r in runs]
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)  # never through a link
    with os.fdopen(descriptor, "a") as f:
        for entry in added:
            f.write(json.dumps(entry) + "\n")
    return entries + added


def write_scoreboard(results: Iterable[Path], out: Path, failed_cells: list[dict[str, Any]] | None = None,
                     history: Path | None = None, expectations: Path | None = None) -> Path:
    """``expectations``: a directory of expectations files, whose entries give each cause's example
    its reason and link (where the runs had none of their own)."""
    runs = all_runs(results)
    entries = append_history(history, runs) if history is not None else []
    board = build(runs, failed_cells or [], entries)
    if expectations is not None:
        _known_reasons(board, expectations)
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(out / "scoreboard.json", json.dumps(board, indent=1))
    write_atomically(out / "index.html", render(board))
    return out / "index.html"


def _plot(board: dict[str, Any]) -> str:
    """Inline SVG: per runtime, the outcomes of each release (stacked), and the pass counts of the
    history's nightlies."""
    import matplotlib

    matplotlib.use("svg")
    with matplotlib.rc_context({"text.parse_math": False}):  # "$...$" in a name from a file is text, not TeX
        return _plotted(board)


def _plotted(board: dict[str, Any]) -> str:
    from matplotlib import pyplot

    runtimes = board["runtimes"]
    panels = len(runtimes) + (1 if board["history"] else 0)
    if not panels:
        return ""
    figure, axes = pyplot.subplots(panels, 1, figsize=(9, 2.8 * panels), squeeze=False)
    colours = dict(zip(REPORT_WORDS, ("#4caf50", "#9ccc65", "#7986cb", "#b0bec5", "#cfd8dc", "#e53935", "#fb8c00",
                                      "#8e24aa", "#6d4c41", "#f06292")))
    for axis, (runtime, data) in zip(axes[:, 0], runtimes.items()):
        releases = data["releases"][-MAX_RELEASES:]
        bottom = [0] * len(releases)
        for word in REPORT_WORDS:
            counts = [data["summary"][r].get(word, 0) for r in releases]
            if any(counts):
                axis.bar([_plain(r) for r in releases], counts, bottom=bottom, label=word, color=colours.get(word))
                bottom = [b + c for b, c in zip(bottom, counts)]
        axis.set_title(_plain(f"{runtime}: outcomes per release"))
        axis.tick_params(axis="x", labelrotation=45, labelsize=8)
        axis.legend(fontsize=7, ncol=5, loc="lower left")
    if board["history"]:
        axis = axes[-1, 0]
        for label, points in _history_series(board["history"]).items():
            axis.plot([_plain(p[0]) for p in points], [p[1] for p in points], marker="o", label=_plain(label))
        axis.set_title("items passing, per nightly")
        axis.tick_params(axis="x", labelrotation=30, labelsize=7)
        axis.legend(fontsize=7, ncol=3)
    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    pyplot.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _history_series(history: list[dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
    """The pass counts of the newest MAX_SERIES labels, their newest MAX_NIGHTLIES nightlies each."""
    series: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for entry in history:
        series[entry["label"]].append((entry["when"], int(entry["summary"].get(Outcome.PASS.value, 0))))
    newest = sorted(series, key=lambda label: max(when for when, _ in series[label]))[-MAX_SERIES:]
    return {label: series[label][-MAX_NIGHTLIES:] for label in sorted(newest)}


def _plain(text: str) -> str:
    """Text from a file, as a plot shows it: no control character (a raw ESC would reach stderr
    through matplotlib's missing-glyph warning), and cut short."""
    return inert(str(text))[:MAX_LABEL]


def _plot_note(board: dict[str, Any]) -> str:
    """What the plots leave out, said on the page."""
    labels = {entry["label"] for entry in board["history"]}
    cut = [f"{name}: the newest {MAX_RELEASES} of {len(data['releases'])} releases"
           for name, data in board["runtimes"].items() if len(data["releases"]) > MAX_RELEASES]
    if len(labels) > MAX_SERIES or any(len(points) > MAX_NIGHTLIES for points in _series_lengths(board["history"])):
        cut.append(f"the history: the newest {MAX_SERIES} of {len(labels)} labels, {MAX_NIGHTLIES} nightlies each at most")
    return "; ".join(cut)


def _series_lengths(history: list[dict[str, Any]]) -> list[list[Any]]:
    grouped: dict[str, list[Any]] = defaultdict(list)
    for entry in history:
        grouped[entry["label"]].append(entry)
    return list(grouped.values())


def render(board: dict[str, Any]) -> str:
    """The page (templates/scoreboard.html) of a scoreboard."""
    runtimes = board["runtimes"]
    return template("scoreboard.html").render(
        generated=board["generated"], runtimes=[(name, len(data["releases"])) for name, data in runtimes.items()],
        cells_not_run=board["cells_not_run"],
        regressions=[{"runtime": runtime, "before": step["from"], "after": step["to"], "count": step["items"],
                      "causes": [{"signature": shorten(c["signature"], 220), "count": c["items"], "example": c["example"]}
                                 for c in step["causes"]]}
                     for runtime, data in runtimes.items() for step in reversed(data["regressions"])],
        plot_note=_plot_note(board), plot=Markup(_plot(board)),  # matplotlib's SVG, which escapes its own text
        causes=[(runtime, [_cause_row(cause) for cause in data["causes"]]) for runtime, data in runtimes.items()],
        grids=[_grid(runtime, data) for runtime, data in runtimes.items()])


def _cause_row(cause: dict[str, Any]) -> dict[str, Any]:
    example = cause["example"]
    if cause["fixed_in"]:
        after = cause["fixed_in"]
    elif cause["changed_in"]:
        after = f"changed in {cause['changed_in']} ({cause['still_failing']} items still fail otherwise)"
    else:
        after = "not yet"
    return {"signature": shorten(cause["signature"], 240), "first_seen": cause["first_seen"], "last_seen": cause["last_seen"],
            "after": after, "per_release": ", ".join(f"{r}: {n}" for r, n in cause["releases"].items()),
            "gaps": ", ".join(cause["gaps"]), "example": example["id"], "release": example["release"],
            "script": example.get("script"), "reason": shorten(example["reason"], 200) if example.get("reason") else "",
            "link": example.get("link")}  # an http(s) address: expectations files refuse any other


def _grid(runtime: str, data: dict[str, Any]) -> tuple[str, list[str], list[tuple[str, list[list[tuple[str, int]]]]]]:
    """Each release's outcome counts per operator version, the newest release first."""
    op_versions = sorted({ov for grid in data["grid"].values() for ov in grid})
    rows = [(release, [[(w, data["grid"][release].get(ov, {}).get(w)) for w in REPORT_WORDS
                        if data["grid"][release].get(ov, {}).get(w)] for ov in op_versions])
            for release in reversed(data["releases"])]
    return runtime, op_versions, rows

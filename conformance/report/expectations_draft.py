"""`conformance expectations RESULTS.json`: a first expectations file for a backend, drafted from
a run's records (the format ``judge/expectations.py`` reads)."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

import yaml

from ..judge.verdict import first_line
from ..outcomes import BACKEND_FAILURES, Outcome
from ..judge.diagnoses import Diagnosis
from .record import ItemRecord, RunDocument
from .results import shorten
from .causes import Catalogue, Cluster, failure_clusters, line_diagnoses, title, without_readings


def draft_expectations(document: RunDocument, backend: str) -> str:
    """A first expectations file for ``backend`` from a run: the entries of each line of the
    report's failures by cause (``failure_clusters``), as ``drafted_by_line`` drafts them."""
    items = [r for r in document["items"] if r["backend"] == backend]
    if not items:
        raise ValueError(f"the run has no items of backend {backend!r}")
    wrong_words = {o.value for o in BACKEND_FAILURES}
    catalogue = document["catalogue"]
    lines = failure_clusters([r for r in items if r["outcome"] in wrong_words], catalogue).get(backend, [])
    entries = [entry for _, found in drafted_by_line(lines, items, catalogue) for entry in found]
    version = next(b["version"] for b in document["environment"]["backends"] if b["name"] == backend)
    draft = {"backend": backend, "tested_with": version, "entries": entries}
    header = (f"# Drafted by `conformance expectations` from the run of {document['started']}:\n"
              "# one entry per line of the report's failures by cause (several where one glob cannot\n"
              "# cover a line; a line defect models reproduce by its models, as diagnosis); the reasons\n"
              "# are the models' titles, else the lines' signatures: replace those with the causes.\n")
    return header + yaml.safe_dump(draft, sort_keys=False, width=100, allow_unicode=True)


def drafted_by_line(lines: list[Cluster], items: list[ItemRecord], catalogue: Catalogue) -> list[tuple[Cluster, list[dict[str, Any]]]]:
    """Each line of one backend's failures with the entries drafted for it: under the broadest
    globs that match no item of ``items`` (the backend's) the entry must not reach; a line defect
    models reproduce by cause (``diagnosis``: each model's name, its title as the reason); the
    reason of another line is its signature and an example message, to be rewritten as the cause.
    An item that sits on two lines (two causes) is drafted on the first."""
    chosen = line_diagnoses([r for line in lines for r in line.records], catalogue)
    drafted: list[tuple[Cluster, list[dict[str, Any]]]] = []
    listed: set[str] = set()
    for line in lines:
        wrong = [r for r in line.records if r["id"] not in listed]
        own = {r["id"] for r in wrong}
        # A glob may reach the items of earlier entries (the first match wins) and those an
        # expectation leaves alone (unsupported, divergent).
        others = [r["id"] for r in items if r["id"] not in own and r["id"] not in listed
                  and r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.DIVERGENT.value)]
        listed.update(own)
        if not wrong:
            drafted.append((line, []))
        elif line.diagnosed:  # by cause: the items the model reproduces wherever they show, not the ids seen
            # An item on a retyping's line whose values no model reproduces has no diagnosis an
            # entry could take it by (an entry's diagnosis is read from the values'): its ids, then.
            named = [r for r in wrong if (r["backend"], r["id"]) in chosen]
            unnamed = [r for r in wrong if (r["backend"], r["id"]) not in chosen]
            drafted.append((line, _by_cause(named, {r["id"]: chosen[r["backend"], r["id"]] for r in named}, catalogue)
                            + (_by_globs(line, unnamed, others + [r["id"] for r in named]) if unnamed else [])))
        else:
            drafted.append((line, _by_globs(line, wrong, others)))
    return drafted


def _by_globs(line: Cluster, wrong: list[ItemRecord], others: list[str]) -> list[dict[str, Any]]:
    """Entries that list ``wrong`` under the broadest globs that reach none of ``others``."""
    uncovered = dict.fromkeys(r["id"] for r in wrong)
    entries = []
    while uncovered:
        first = next(r for r in wrong if r["id"] in uncovered)
        best: str | None = None
        covered: list[str] = []
        for glob in _candidate_globs(first):
            match = re.compile(fnmatch.translate(glob)).match
            hits = [i for i in uncovered if match(i)]
            if len(hits) > len(covered) and not any(match(i) for i in others):
                best, covered = glob, hits
        for item_id in covered:
            del uncovered[item_id]
        example = shorten(first_line(first["message"], "no message"), 200)
        entries.append({"match": best, "outcome": first["outcome"],
                        "reason": f"{line.signature.partition(': ')[2]} (for example: {example})"})
    return entries


def _by_cause(records: list[ItemRecord], names: dict[str, Diagnosis], catalogue: Catalogue) -> list[dict[str, Any]]:
    """One entry per defect model (and outcome) of a diagnosed line: ``diagnosis`` takes an item
    whose failure the model reproduces exactly, whichever items a machine's kernels make fail (a
    draft from ``--conformance-sample`` is no narrower than the run it came from)."""
    found: dict[tuple[Diagnosis, str], None] = {}
    for r in records:
        found[without_readings(names[r["id"]]), r["outcome"]] = None
    return [{"diagnosis": d.name, "outcome": outcome,
             "reason": f"{title(d, catalogue)} (reproduced exactly by the defect model {d.name})", "cause": d.name}
            for d, outcome in found]


def _candidate_globs(record: ItemRecord) -> list[str]:
    """Every version or this one, every element type or this one, and the case path cut after
    each '/' or '-' (its parameter labels); the id itself is among them, so one is always safe."""
    path, dtype = record["id"].split("/", 1)[1].rpartition("[")[::2]
    cuts = ["*"] + [_glob_escape(path[:i + 1]) + "*" for i, c in enumerate(path) if c in "/-"] + [_glob_escape(path)]
    versions = [f"{record['op']}-*", f"{record['op']}-{record['version']}"]
    dtypes = ["[[]*", "[[]" + _glob_escape(dtype[:-1]) + "[]]"]
    globs = [f"{v}/{c}{d}" for c in cuts for v in versions for d in dtypes]
    return [g.removesuffix("*[[]*") + "*" if g.endswith("*[[]*") else g for g in globs]


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


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
from .causes import Catalogue, failure_clusters, line_diagnoses, title, without_readings


def draft_expectations(document: RunDocument, backend: str) -> str:
    """A first expectations file for ``backend`` from a run: the entries of each line of the
    report's failures by cause (``failure_clusters``) under the broadest globs that match no item
    the entry must not reach. A line defect models reproduce is drafted by cause (``diagnosis``:
    each model's name, its title as the reason); the reason of another line is its signature and an
    example message: rewrite it as the cause."""
    items = [r for r in document["items"] if r["backend"] == backend]
    if not items:
        raise ValueError(f"the run has no items of backend {backend!r}")
    wrong_words = {o.value for o in BACKEND_FAILURES}
    catalogue = document["catalogue"]
    lines = failure_clusters([r for r in items if r["outcome"] in wrong_words], catalogue).get(backend, [])
    chosen = line_diagnoses([r for line in lines for r in line.records], catalogue)
    entries: list[dict[str, Any]] = []
    listed: set[str] = set()
    for line in lines:
        # an item with two causes sits on two lines: the first entry that lists it is its own
        wrong = [r for r in line.records if r["id"] not in listed]
        if not wrong:
            continue
        uncovered = dict.fromkeys(r["id"] for r in wrong)
        # A glob may reach the items of earlier entries (the first match wins) and those an
        # expectation leaves alone (unsupported, divergent).
        others = [r["id"] for r in items if r["id"] not in uncovered and r["id"] not in listed
                  and r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.DIVERGENT.value)]
        listed.update(uncovered)
        if line.diagnosed:  # by cause: the items the model reproduces wherever they show, not the ids seen
            entries += _by_cause(line.records, {r["id"]: chosen[backend, r["id"]] for r in wrong}, catalogue)
            continue
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
            entry = {"match": best, "outcome": first["outcome"]}
            example = shorten(first_line(first["message"], "no message"), 200)
            entry["reason"] = f"{line.signature.partition(': ')[2]} (for example: {example})"
            entries.append(entry)
    version = next(b["version"] for b in document["environment"]["backends"] if b["name"] == backend)
    draft = {"backend": backend, "tested_with": version, "entries": entries}
    header = (f"# Drafted by `conformance expectations` from the run of {document['started']}:\n"
              "# one entry per line of the report's failures by cause (several where one glob cannot\n"
              "# cover a line; a line defect models reproduce by its models, as diagnosis); the reasons\n"
              "# are the models' titles, else the lines' signatures: replace those with the causes.\n")
    return header + yaml.safe_dump(draft, sort_keys=False, width=100, allow_unicode=True)


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


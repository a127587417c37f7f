"""`conformance expectations RESULTS.json`: a first expectations file for a backend, drafted from
a run's records (the format ``judge/expectations.py`` reads)."""

from __future__ import annotations

import fnmatch
import re
from collections import defaultdict
from typing import Any

import yaml

from ..judge.verdict import first_line
from ..outcomes import BACKEND_FAILURES, Outcome
from ..judge.diagnosis import titles
from .results import line_diagnoses, shorten

DIAGNOSIS = "diagnosis:"


def draft_expectations(document: dict[str, Any], backend: str) -> str:
    """A first expectations file for ``backend`` from a run. Wrong items one defect model reproduces
    share its entries, its title as their reason; other wrong items with the same outcome and the
    same start of message (digits aside) share an entry, under the broadest globs that match no
    item the entry must not reach. The reasons are the run's messages: rewrite them as causes."""
    items = [r for r in document["items"] if r["backend"] == backend]
    if not items:
        raise ValueError(f"the run has no items of backend {backend!r}")
    wrong_words = {o.value for o in BACKEND_FAILURES}
    diagnosed = line_diagnoses([r for r in items if r["outcome"] in wrong_words])
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in items:  # one entry per diagnosis, else per outcome and start of message
        if record["outcome"] in wrong_words:
            name = diagnosed.get((backend, record["id"]))
            key = f"{DIAGNOSIS}{name}" if name else re.sub(r"\d+", "#", first_line(record["message"], "no message"))[:80]
            groups[record["outcome"], key].append(record)
    entries: list[dict[str, Any]] = []
    listed: set[str] = set()
    for (outcome, key), wrong in groups.items():
        uncovered = dict.fromkeys(r["id"] for r in wrong)
        # A glob may reach the items of earlier entries (the first match wins) and those an
        # expectation leaves alone (unsupported, divergent).
        others = [r["id"] for r in items if r["id"] not in uncovered and r["id"] not in listed
                  and r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.DIVERGENT.value)]
        listed.update(uncovered)
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
            if key.startswith(DIAGNOSIS):
                name = key.removeprefix(DIAGNOSIS)
                reason = f"{titles([name])[0]} (reproduced exactly by the defect model {name})"
            else:
                reason = shorten(first_line(first["message"], "no message"), 300)
            entries.append({"match": best, "outcome": outcome, "reason": reason})
    version = next(b["version"] for b in document["environment"]["backends"] if b["name"] == backend)
    draft = {"backend": backend, "tested_with": version, "entries": entries}
    header = (f"# Drafted by `conformance expectations` from the run of {document['started']}:\n"
              "# the reasons are the defect models that reproduce the items, else the run's messages;\n"
              "# replace those with the causes.\n")
    return header + yaml.safe_dump(draft, sort_keys=False, width=100, allow_unicode=True)


def _candidate_globs(record: dict[str, Any]) -> list[str]:
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


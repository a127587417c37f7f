"""Known failures of a backend, kept in files outside the cases (e.g. reports/expectations/ort.yaml).

A listed item that fails as listed becomes `xfail`; a listed item that passes becomes `xpass`,
which fails the run, so that the list stays true. A listed item that goes wrong in another way
keeps its own outcome, with the listing named in its message.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .cases import read_yaml
from .compare import Outcome, Verdict, first_line


@dataclass(frozen=True)
class Expectation:
    match: str  # a glob over item ids, e.g. "MaxPool-*/pads_beyond_kernel/*"
    outcome: Outcome
    reason: str
    link: str | None
    where: str  # file:line of the entry

    def as_json(self) -> dict[str, str | None]:
        return {"match": self.match, "outcome": self.outcome.value, "reason": self.reason,
                "link": self.link, "where": self.where}


class Expectations:
    def __init__(self, entries: list[Expectation]):
        self.entries = entries

    def find(self, item_id: str) -> Expectation | None:
        return next((e for e in self.entries if fnmatch.fnmatchcase(item_id, e.match)), None)

    def apply(self, item_id: str, verdict: Verdict) -> tuple[Verdict, Expectation | None]:
        known = self.find(item_id)
        if known is None or verdict.outcome in (Outcome.UNSUPPORTED, Outcome.DIVERGENT):
            return verdict, None
        if verdict.outcome is Outcome.PASS:
            message = f"listed as a known {known.outcome.value} ({known.reason}) but passes: update {known.where}"
            return dataclasses.replace(verdict, outcome=Outcome.XPASS, message=message), known
        if verdict.outcome is known.outcome:
            return dataclasses.replace(verdict, outcome=Outcome.XFAIL, message=f"{verdict.message} [known: {known.reason}]"), known
        message = f"{verdict.message} (listed as a known {known.outcome.value} at {known.where})"
        return dataclasses.replace(verdict, message=message), known


def load_expectations(path: Path, backend: str, fallback: str | None = None,
                      details: dict[str, str] | None = None) -> Expectations | None:
    """The expectations of ``backend``: ``path`` itself, or ``path/<backend>.yaml`` for a directory
    (``path/<fallback>.yaml`` when that does not exist: a backend with options, ``ort[threads=1]``,
    shares the list of ``ort``). An entry with ``when`` applies only where the backend's
    ``details()`` have one of the values given (an optimization level, an execution provider)."""
    file = path
    if path.is_dir():
        file = next((path / f"{name}.yaml" for name in (backend, fallback) if name and (path / f"{name}.yaml").exists()),
                    path / f"{backend}.yaml")
    if not file.exists():
        return None
    source = read_yaml(file, "expectations.schema.json")
    if source.data["backend"] not in (backend, fallback):
        raise source.error(("backend",), f"lists {source.data['backend']!r}, not the backend under test {backend!r}")
    entries = []
    for index, entry in enumerate(source.data["entries"]):
        when = {key: [value] if isinstance(value, str) else value for key, value in entry.get("when", {}).items()}
        if any((details or {}).get(key) not in values for key, values in when.items()):
            continue
        where = f"{file}:{source.line(('entries', index))}"
        outcome = Outcome(entry["outcome"])
        entries.append(Expectation(entry["match"], outcome, entry["reason"], entry.get("link"), where))
    return Expectations(entries)



KNOWN_OUTCOMES = (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT)


def draft_expectations(document: dict[str, Any], backend: str) -> str:
    """A first expectations file for ``backend`` from a run. Wrong items with the same outcome and
    the same start of message (digits aside) share an entry, under the broadest globs that match no
    item the entry must not reach. The reasons are the run's messages: rewrite them as causes."""
    items = [r for r in document["items"] if r["backend"] == backend]
    if not items:
        raise ValueError(f"the run has no items of backend {backend!r}")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in items:
        if record["outcome"] in {o.value for o in KNOWN_OUTCOMES}:
            groups[record["outcome"], re.sub(r"\d+", "#", first_line(record["message"], "no message"))[:80]].append(record)
    entries, listed = [], set()
    for (outcome, _), wrong in groups.items():
        uncovered = dict.fromkeys(r["id"] for r in wrong)
        # A glob may reach the items of earlier entries (the first match wins) and those an
        # expectation leaves alone (unsupported, divergent).
        others = [r["id"] for r in items if r["id"] not in uncovered and r["id"] not in listed
                  and r["outcome"] not in (Outcome.UNSUPPORTED.value, Outcome.DIVERGENT.value)]
        listed.update(uncovered)
        while uncovered:
            first = next(r for r in wrong if r["id"] in uncovered)
            best, covered = None, []
            for glob in _candidate_globs(first):
                match = re.compile(fnmatch.translate(glob)).match
                hits = [i for i in uncovered if match(i)]
                if len(hits) > len(covered) and not any(match(i) for i in others):
                    best, covered = glob, hits
            for item_id in covered:
                del uncovered[item_id]
            entries.append({"match": best, "outcome": outcome, "reason": first_line(first["message"], "no message")})
    version = next(b["version"] for b in document["environment"]["backends"] if b["name"] == backend)
    draft = {"backend": backend, "tested_with": version, "entries": entries}
    header = (f"# Drafted by `conformance expectations` from the run of {document['started']}:\n"
              "# the reasons are the run's messages; replace them with the causes.\n")
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


"""Known failures of a backend, kept in files outside the cases (e.g. reports/expectations/ort.yaml).

A listed item that fails as listed becomes `xfail`; a listed item that passes becomes `xpass`,
which fails the run, so that the list stays true. A listed item that goes wrong in another way
keeps its own outcome, with the listing named in its message.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass
from pathlib import Path

from .cases import read_yaml
from .compare import Outcome, Verdict


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


def load_expectations(path: Path, backend: str, fallback: str | None = None) -> Expectations | None:
    """The expectations of ``backend``: ``path`` itself, or ``path/<backend>.yaml`` for a directory
    (``path/<fallback>.yaml`` when that does not exist: a backend with options, ``ort[threads=1]``,
    shares the list of ``ort``)."""
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
        where = f"{file}:{source.line(('entries', index))}"
        outcome = Outcome(entry["outcome"])
        entries.append(Expectation(entry["match"], outcome, entry["reason"], entry.get("link"), where))
    return Expectations(entries)


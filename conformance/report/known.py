"""What to do about each failure line, as the report leads with it: a line is known where an
expectations entry the run applied names its cause (the entry's cause or diagnosis, or a model of
the items it took as known failures, is one of the line's models; or those items share a
refusal's or crash's cause signature, the runtime's words, with the line's): then
the entries, and the line's ids none of them lists. Any other line is new, with the entries drafted
for it to paste (as ``conformance expectations`` drafts them).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..outcomes import Outcome
from .causes import Catalogue, Cluster, cause_signature, diagnoses, failure_clusters
from .expectations_draft import drafted_by_line
from .record import ItemRecord, RunDocument

# Lines drafted per backend, at most: a glob's search reads every item of the backend once per
# candidate glob, and the report shows this many lines (html.SHOWN_CLUSTERS) in any case.
DRAFTED_LINES = 60


@dataclass
class Advice:
    entries: list[dict[str, Any]] = field(default_factory=list)  # known: the entries that name its cause
    draft: str = ""  # new: the entries drafted for it, as YAML

    @property
    def known(self) -> bool:
        return bool(self.entries)


def report_model(document: RunDocument) -> tuple[dict[str, list[Cluster]], dict[tuple[str, str], Advice]]:
    """What the renderers show of the failures, computed once per report: the lines, and what to
    do about each."""
    clusters = failure_clusters(document["items"], document["catalogue"])
    return clusters, advice(document, clusters)


def advice(document: RunDocument, clusters: dict[str, list[Cluster]]) -> dict[tuple[str, str], Advice]:
    """(backend, line signature) -> what to do about that line."""
    catalogue = document["catalogue"]
    named = _named_causes(document["items"], catalogue)
    found: dict[tuple[str, str], Advice] = {}
    for backend, all_lines in clusters.items():
        items = [r for r in document["items"] if r["backend"] == backend]
        # an xpass line is an entry gone stale: its own words say which entry to update
        lines = [line for line in all_lines if any(r["outcome"] != Outcome.XPASS.value for r in line.records)]
        for line in lines:
            entries = {e.get("where") or e["match"]: e for r in line.records for key in _keys(r, catalogue)
                       for e in named.get((backend, key), [])}
            found[backend, line.signature] = Advice(sorted(entries.values(), key=lambda e: str(e.get("where"))))
        for line, drafted in drafted_by_line([c for c in lines if not found[backend, c.signature].known][:DRAFTED_LINES],
                                             items, catalogue):
            if drafted:
                found[backend, line.signature].draft = yaml.safe_dump(drafted, sort_keys=False, width=100, allow_unicode=True)
    return found


def _keys(record: ItemRecord, catalogue: Catalogue) -> set[str]:
    """What ties a record to a cause: the models of its diagnoses; and its cause signature where
    that names the cause (a diagnosis, or the runtime's own words about a refusal or crash), not
    where it only says which output differs ("Y values differ" fits unrelated bugs alike)."""
    models = {m.plain for d in diagnoses(record) for m in d.models}
    return models | ({cause_signature(record, None, catalogue)} if models or not record.get("diff") else set())


def _named_causes(items: list[ItemRecord], catalogue: Catalogue) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(backend, key) -> the entries that took the run's known failures of that key: each known
    failure's record as its entry lists it (the entry's outcome), and the cause or diagnosis the
    entry names."""
    named: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in items:
        entry = r.get("expectation")
        if r["outcome"] != Outcome.XFAIL.value or not isinstance(entry, dict) or entry.get("outcome") is None:
            continue
        listed = ItemRecord(**{**r, "outcome": entry["outcome"]})  # as its entry lists it
        keys = _keys(listed, catalogue) | {name for name in (entry.get("cause"), entry.get("diagnosis")) if name}
        for key in keys:
            named[r["backend"], key][entry.get("where") or entry["match"]] = entry
    return {key: list(entries.values()) for key, entries in named.items()}

"""How the report's failure lines match a runtime's confirmed root causes, before and after
diagnosis: each distinct cause of the backend's expectations file (an entry's ``cause``, else its
reason; each hand-checked on a tiny model) is one root cause; the run's failing records are matched to its entries, then clustered as
the report clusters them, once with their diagnoses and once without.

    python -m tests.diagnosis_trial RESULTS.json EXPECTATIONS.yaml|CAUSES.json [BACKEND]

(CAUSES.json: a vendor trial's own attribution, item id -> root cause; items it leaves out
count for no cause.)

prints, for each, the causes shown as exactly one line that holds nothing else, the lines that
merge two causes or more, and the lines in all.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from unittest import mock

from conformance.judge.expectations import load_expectations
from conformance.outcomes import FAILING_WORDS
from conformance.report import results
from conformance.report.results import failure_clusters, read_results


def measure(records: list[dict], population: list[dict], cause_of: dict[str, str], diagnosed: bool) -> dict:
    """``diagnosed`` False: as the report was before diagnosis (no defect models, no window
    classes, no deciding attributes)."""
    if diagnosed:
        lines = [c for clusters in failure_clusters(population).values() for c in clusters]
    else:
        bare = [{k: v for k, v in r.items() if k not in ("diagnosis", "where")} for r in records]
        with mock.patch.object(results, "_split_by_deciding_attributes", lambda grouped, items: None):
            lines = [c for clusters in failure_clusters(bare).values() for c in clusters]
    causes_per_line = [{cause_of[r["id"]] for r in line.records if r["id"] in cause_of} for line in lines]
    lines_per_cause: dict[str, list[int]] = defaultdict(list)
    for index, causes in enumerate(causes_per_line):
        for cause in causes:
            lines_per_cause[cause].append(index)
    one_line = [c for c, at in lines_per_cause.items() if len(at) == 1 and len(causes_per_line[at[0]]) == 1]
    return {"causes": len(lines_per_cause), "one line of its own": len(one_line),
            "lines merging causes": sum(1 for c in causes_per_line if len(c) > 1), "lines": len(lines)}


def trial(results: Path, expectations: Path, backend: str | None = None) -> dict[str, dict]:
    document = read_results(results)
    backend = backend or document["items"][0]["backend"]
    records = [r for r in document["items"] if r["backend"] == backend and r["outcome"] in FAILING_WORDS]
    if expectations.suffix == ".json":
        attributed = json.loads(expectations.read_text())
        cause_of = {r["id"]: attributed[r["id"]] for r in records if r["id"] in attributed}
    else:
        details = next((b.get("details", {}) for b in document["environment"]["backends"] if b["name"] == backend), {})
        listed = load_expectations(expectations, backend, details=details)
        entries = {r["id"]: listed.find(r["id"]) for r in records}
        cause_of = {i: (e.cause or " ".join(e.reason.split())) if e else "not in the expectations file"
                    for i, e in entries.items()}
    population = [r for r in document["items"] if r["backend"] == backend]
    return {"before": measure(records, population, cause_of, False), "after": measure(records, population, cause_of, True)}


if __name__ == "__main__":
    for when, row in trial(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:4]).items():
        print(f"{when:7s} " + ", ".join(f"{k}: {v}" for k, v in row.items()))

"""How the report's failure lines match a runtime's confirmed root causes, before and after
diagnosis: each distinct cause of the backend's expectations file (an entry's ``cause``, else its
reason; each hand-checked on a tiny model) is one root cause; the run's failing records are matched to its entries, then clustered as
the report clusters them, once with their diagnoses and once without.

    python -m bench.diagnosis_trial RESULTS.json EXPECTATIONS.yaml|CAUSES.json [BACKEND]

(CAUSES.json: a vendor trial's own attribution, item id -> root cause; items it leaves out
count for no cause; a list, or causes joined by "+" (as an entry's `cause` names them), where an item carries several bugs at
once, each hand-checked on it).

prints, for each stage (before diagnosis, with diagnosis, with the experiments too), the causes
shown as exactly one line, the lines that merge causes, and the lines
in all. A line stands for the causes every item on it carries; it merges causes where no cause is
common to all its items. A cause shows as exactly one line where the items that carry it alone all
lie on one line that stands for it alone, and no other line stands for it alone: an item with two
bugs may join either bug's line. With one cause per item this is: every item of the cause on one
line that holds nothing else.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from unittest import mock

from conformance.judge.expectations import load_expectations
from conformance.outcomes import FAILING_WORDS
from conformance.report import causes as line_rules
from conformance.report.results import read_results
from conformance.report.causes import failure_clusters


def causes_of(attributed: str | list[str]) -> frozenset[str]:
    return frozenset(attributed if isinstance(attributed, list) else (c.strip() for c in attributed.split("+")))


def measure(records: list[dict], population: list[dict], cause_of: dict[str, frozenset[str]], stage: str) -> dict:
    """``stage``: "bare", the report as it was before diagnosis (no defect models, no window
    classes, no deciding attributes splitting or merging lines, no experiments); "diagnosed", with
    all of those but the experiments (an explanation's words left out of the records); "explained",
    the report as the run wrote it."""
    if stage == "bare":
        bare = [{k: v for k, v in r.items() if k not in ("diagnosis", "where", "explanation")} for r in records]
        with mock.patch.object(line_rules, "_split_by_deciding_attributes", lambda grouped, items: None), \
                mock.patch.object(line_rules, "_merge_refusals_by_deciding_attributes", lambda grouped, items: None):
            lines = [c for clusters in failure_clusters(bare).values() for c in clusters]
    else:
        shown = population if stage == "explained" else [{k: v for k, v in r.items() if k != "explanation"}
                                                         for r in population]
        lines = [c for clusters in failure_clusters(shown).values() for c in clusters]
    sets_per_line = [[cause_of[r["id"]] for r in line.records if r["id"] in cause_of] for line in lines]
    common = [frozenset.intersection(*sets) if sets else None for sets in sets_per_line]
    alone_on: dict[str, set[int]] = defaultdict(set)  # the lines that hold an item carrying the cause alone
    for index, sets in enumerate(sets_per_line):
        for causes in sets:
            if len(causes) == 1:
                alone_on[next(iter(causes))].add(index)
    every = {c for sets in sets_per_line for causes in sets for c in causes}
    one_line = [c for c in every
                if len(at := [i for i, shared in enumerate(common) if shared == {c}]) == 1 and alone_on[c] <= set(at)]
    table = {c: {"items": sum(c in causes for sets in sets_per_line for causes in sets),
                 "one line": c in one_line,
                 "on lines": [lines[i].signature[:90] for i, sets in enumerate(sets_per_line) if any(c in x for x in sets)]}
             for c in sorted(every)}
    return {"causes": len(every), "one line of its own": len(one_line),
            "lines merging causes": sum(1 for shared in common if shared is not None and not shared), "lines": len(lines),
            "table": table}


def trial(results: Path, expectations: Path, backend: str | None = None) -> dict[str, dict]:
    document = read_results(results)
    backend = backend or document["items"][0]["backend"]
    records = [r for r in document["items"] if r["backend"] == backend and r["outcome"] in FAILING_WORDS]
    if expectations.suffix == ".json":
        attributed = json.loads(expectations.read_text())
        cause_of = {r["id"]: causes_of(attributed[r["id"]]) for r in records if r["id"] in attributed}
    else:
        details = next((b.get("details", {}) for b in document["environment"]["backends"] if b["name"] == backend), {})
        listed = load_expectations(expectations, backend, details=details)
        entries = {r["id"]: listed.find(r["id"]) for r in records}
        cause_of = {i: causes_of(e.cause) if e and e.cause else frozenset({" ".join(e.reason.split()) if e else
                                                                         "not in the expectations file"})
                    for i, e in entries.items()}
    population = [r for r in document["items"] if r["backend"] == backend]
    return {stage: measure(records, population, cause_of, stage) for stage in ("bare", "diagnosed", "explained")}


if __name__ == "__main__":
    stages = trial(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:4])
    for stage, row in stages.items():
        print(f"{stage:9s} " + ", ".join(f"{k}: {v}" for k, v in row.items() if k != "table"))
    print("per cause, as the run's report shows it (explained):")
    for cause, row in stages["explained"]["table"].items():
        print(f"  {'one line ' if row['one line'] else 'NOT one  '} {cause}: {row['items']} items on "
              f"{len(row['on lines'])} line(s): " + " | ".join(row["on lines"]))

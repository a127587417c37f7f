"""How many failure causes the report shows per root bug: the suite run against backends with a
known number of root bugs each (mutants of the reference with one bug, and some with several at
once, as a runtime under test has), the failing records clustered as the report clusters them.

    python -m bench.cause_trial          # every item; prints backend, root bugs, failing items, causes

tests/meta/test_causes.py runs it on a share of the items and holds causes per root bug at 2 or fewer.
"""

from __future__ import annotations

import sys
import time
from functools import cache

from conformance.judge.verdict import Outcome, evaluate
from conformance.load.cases import bundled_case_dir
from conformance.outcomes import FAILING_WORDS
from conformance.report.causes import failure_clusters
from conformance.report.record import item_record
from tests.support.bundled import bundled_items
from tests.meta.support.mutants import MUTANTS, Mutant
from tests.meta.support.mutant_backend import REGISTRY, MutantBackend

# One root bug each, among them those a vendor trial met in tinygrad and onnx2torch.
SINGLE = ["padding_is_zero", "accumulator_starts_at_zero", "indices_per_plane", "storage_order_ignored",
          "dilations_ignored", "same_total_without_dilation", "int8_compared_unsigned", "unpool_indices_per_plane",
          "ceil_mode_ignored", "negative_zero_made_positive"]
# Several at once (each overrides its own hook of the reference, so that all of them act).
COMBINED = [("same_total_without_dilation", "indices_per_plane", "unpool_indices_per_plane"),
            ("ceil_mode_ignored", "int8_compared_unsigned", "unpool_not_zero_filled"),
            ("dilations_ignored", "accumulator_starts_at_zero")]


def mutant(name: str) -> Mutant:
    return next(m for m in MUTANTS if m.name == name)


def combined(names: tuple[str, ...]) -> Mutant:
    bases = tuple(mutant(n).backend for n in names)
    return Mutant("+".join(names), "; ".join(mutant(n).bug for n in names), type("Combined", bases, {}))


@cache
def items(share: int = 1) -> list:
    """Every ``share``-th item of the bundled cases (1: all)."""
    return bundled_items()[::share]


def records(backend: MutantBackend, selected: list) -> list[dict]:
    found = []
    for item in selected:
        verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
        if verdict.outcome in (Outcome.PASS, Outcome.UNSUPPORTED):
            continue
        record = item_record(item, bundled_case_dir())
        record.update(backend=backend.name, outcome=verdict.outcome.value, message=verdict.message)
        if verdict.mismatches:
            record["diff"] = [m.as_json() for m in verdict.mismatches]
        if verdict.diagnosis:
            record["diagnosis"] = [d.as_json() for d in verdict.diagnosis]
        found.append(record)
    return found


def trial(share: int = 1) -> list[tuple[str, int, int, int]]:
    """(backend, root bugs, failing items, causes) for each backend of the trial."""
    rows = []
    for bugs in [(name,) for name in SINGLE] + COMBINED:
        backend = MutantBackend(combined(bugs) if len(bugs) > 1 else mutant(bugs[0]))
        failing = [r for r in records(backend, items(share)) if r["outcome"] in FAILING_WORDS]
        causes = len(failure_clusters(failing).get(backend.name, []))
        rows.append((backend.name, len(bugs), len(failing), causes))
    return rows


if __name__ == "__main__":
    started = time.monotonic()
    share = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rows = trial(share)
    for name, bugs, failing, causes in rows:
        print(f"{causes / bugs:5.2f} causes per root bug  {causes:3d} causes  {bugs} bugs  {failing:5d} failing  {name}")
    total_bugs, total_causes = sum(r[1] for r in rows), sum(r[3] for r in rows)
    print(f"overall: {total_causes} causes for {total_bugs} root bugs ({total_causes / total_bugs:.2f}), "
          f"worst {max(r[3] / r[1] for r in rows):.2f}; {len(items(share))} items, {time.monotonic() - started:.0f} s")

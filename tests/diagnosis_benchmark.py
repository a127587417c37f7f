"""What diagnosis adds to a run with many failures: every ``share``-th bundled item judged twice
against a broken backend (the reference with two defects, in process, so that the judge's own time
is all there is to compare), once with diagnosis and once without.

    python -m tests.diagnosis_benchmark [--share 4] [--defects dilations_ignored,accumulator_starts_at_zero]

The goal (issue 38): at most 10% more time for a run with 2,000 failures. A real backend's run
spends more outside the judge (its process, its session), so the share there is smaller.
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

from conformance.judge import verdict as verdict_module
from conformance.judge.verdict import Outcome, evaluate
from tests.cause_trial import combined, items, mutant
from tests.meta.test_mutants import REGISTRY, MutantBackend


def judged(backend, selected) -> tuple[float, int, int]:
    started = time.perf_counter()
    failed = diagnosed = 0
    for item in selected:
        verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
        failed += verdict.outcome is Outcome.FAIL
        diagnosed += bool(verdict.diagnosis)
    return time.perf_counter() - started, failed, diagnosed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--share", type=int, default=4)
    parser.add_argument("--defects", default="dilations_ignored,accumulator_starts_at_zero")
    args = parser.parse_args()
    names = tuple(args.defects.split(","))
    backend = MutantBackend(combined(names) if len(names) > 1 else mutant(names[0]))
    selected = items(args.share)
    judged(backend, selected[:200])  # warm: the oracle's cache, imports
    with mock.patch.object(verdict_module, "diagnose", lambda *a, **k: []):
        without, failed, _ = judged(backend, selected)
    with_diagnosis, _, diagnosed = judged(backend, selected)
    print(f"{len(selected)} items, {failed} failures, {diagnosed} diagnosed: judged in {without:.1f} s without "
          f"diagnosis, {with_diagnosis:.1f} s with (+{100 * (with_diagnosis / without - 1):.0f}%)")


if __name__ == "__main__":
    main()

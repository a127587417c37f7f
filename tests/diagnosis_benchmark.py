"""What diagnosis adds to a run with many failures: every ``share``-th bundled item judged twice
against a broken backend (the reference with two defects, in process, so that the judge's own time
is all there is to compare), once with diagnosis (and, for the items no model reproduces, where
their differences lie) and once without.

    python -m tests.diagnosis_benchmark [--share 4] [--defects dilations_ignored,accumulator_starts_at_zero]
    python -m tests.diagnosis_benchmark --backend openvino [--rounds 2]

The goal (issue 38): at most 10% more time for a run with 2,000 failures. The first form is the
judge alone (an upper bound: a real backend's run spends more outside the judge, its process and
session); the second times whole runs of the suite (`pytest conformance --backend=NAME -n 2`),
alternately with diagnosis and without (this module, loaded as a pytest plugin with
CONFORMANCE_NO_DIAGNOSIS=1, turns it off in every process).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
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


def pytest_configure(config) -> None:
    """As a pytest plugin (-p tests.diagnosis_benchmark): no diagnosis where CONFORMANCE_NO_DIAGNOSIS is set."""
    if os.environ.get("CONFORMANCE_NO_DIAGNOSIS"):
        verdict_module.diagnose = lambda *a, **k: []
        verdict_module.differences_lie = lambda *a, **k: None


def whole_runs(backend: str, rounds: int) -> None:
    command = [sys.executable, "-m", "pytest", "conformance", f"--backend={backend}", "-n", "2", "-q",
               "-p", "tests.diagnosis_benchmark", "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    times: dict[bool, list[float]] = {True: [], False: []}
    # untimed: the first run after a change computes every item's oracle again (pytest's cache)
    subprocess.run(command, capture_output=True, text=True, check=False)
    for _ in range(rounds):
        for diagnosing in (False, True):
            env = {**os.environ, **({} if diagnosing else {"CONFORMANCE_NO_DIAGNOSIS": "1"})}
            started = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            times[diagnosing].append(time.perf_counter() - started)
            print(f"{'with' if diagnosing else 'without':8} {times[diagnosing][-1]:6.1f} s  "
                  f"{(done.stdout.strip().splitlines() or [''])[-1]}", flush=True)
    best = {k: min(v) for k, v in times.items()}
    print(f"{backend}: best of {rounds}: {best[False]:.1f} s without diagnosis, {best[True]:.1f} s with "
          f"(+{100 * (best[True] / best[False] - 1):.1f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--share", type=int, default=4)
    parser.add_argument("--defects", default="dilations_ignored,accumulator_starts_at_zero")
    parser.add_argument("--backend", help="time whole runs of the suite against this backend instead")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.backend:
        whole_runs(args.backend, args.rounds)
        return
    names = tuple(args.defects.split(","))
    backend = MutantBackend(combined(names) if len(names) > 1 else mutant(names[0]))
    selected = items(args.share)
    judged(backend, selected[:200])  # warm: the oracle's cache, imports
    with mock.patch.object(verdict_module, "diagnose", lambda *a, **k: []), \
            mock.patch.object(verdict_module, "differences_lie", lambda *a, **k: None):
        without, failed, _ = judged(backend, selected)
    with_diagnosis, _, diagnosed = judged(backend, selected)
    print(f"{len(selected)} items, {failed} failures, {diagnosed} diagnosed: judged in {without:.1f} s without "
          f"diagnosis, {with_diagnosis:.1f} s with (+{100 * (with_diagnosis / without - 1):.0f}%)")


if __name__ == "__main__":
    main()

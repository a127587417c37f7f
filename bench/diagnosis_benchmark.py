"""What diagnosis adds to a run with many failures: every ``share``-th bundled item judged twice
against a broken backend (the reference with two defects, in process, so that the judge's own time
is all there is to compare), once with diagnosis (and, for the items no model reproduces, where
their differences lie) and once without.

    python -m bench.diagnosis_benchmark [--share 4] [--defects dilations_ignored,accumulator_starts_at_zero]
                                        [--unlisted PadsBothEndsWithTheEndPadIn1D]
    python -m bench.diagnosis_benchmark --backend openvino [--rounds 2]

The goal (issue 38): at most 10% more time for a run with 2,000 failures. The first form is the
judge alone (an upper bound: a real backend's run spends more outside the judge, its process and
session); the second times whole runs of the suite (`pytest conformance --backend=NAME -n 2`),
alternately with diagnosis and without (this module, loaded as a pytest plugin with
CONFORMANCE_NO_DIAGNOSIS=1, turns it off in every process), and the seconds the workers spent in
diagnosis itself (the difference of two whole runs is at the mercy of the machine's load).

The first form then explains the run's lines by experiment (conformance/explain/), within the
budget a run gives it by default: a quarter of the run's own time, here the judging's with
diagnosis. With ``--unlisted`` the backend also has a bug no defect model describes
(tests/meta/support/unlisted_bugs.py), so that some lines need explaining; it prints the lines
explained, the probes, the seconds, and whether they stayed within the budget (the goal: the budget
plus one line's last probe at most).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from conformance.explain.lines import SHARE_OF_RUN, explain_lines
from conformance.judge import verdict as verdict_module
from conformance.judge.verdict import Outcome, evaluate
from conformance.load.cases import bundled_case_dir
from conformance.report.record import item_record, with_verdict
from bench.cause_trial import combined, items, mutant
from tests.meta.support import unlisted_bugs
from tests.meta.support.mutant_backend import REGISTRY, MutantBackend


WORKERS = 2


def judged(backend, selected, records: list | None = None) -> tuple[float, int, int]:
    """Seconds, failures and diagnosed failures; each item's record added to ``records`` where given."""
    started = time.perf_counter()
    failed = diagnosed = 0
    for item in selected:
        verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
        failed += verdict.outcome is Outcome.FAIL
        diagnosed += bool(verdict.diagnosis)
        if records is not None:
            records.append(with_verdict({**item_record(item, bundled_case_dir()), "backend": backend.name}, verdict))
    return time.perf_counter() - started, failed, diagnosed


class WithAnUnlistedBug:
    """A mutant backend that first misreads each MaxPool node as one of unlisted_bugs' backends does."""

    version = "0"

    def __init__(self, backend: MutantBackend, misreading: unlisted_bugs.Misreads):
        self.backend, self.misreading = backend, misreading
        self.name = f"{backend.name}+{type(misreading).__name__}"

    def details(self):
        return {}

    def run(self, model, inputs):
        return self.backend.run(self.misreading.misread_node(model, inputs), inputs)


def explained(backend, selected, records: list, run_s: float) -> None:
    by_id = {item.id: item for item in selected}
    budget = SHARE_OF_RUN * run_s
    done = explain_lines(records, {backend.name: backend}, lambda r: by_id[r["id"]], REGISTRY, 0, budget)
    print(f"explained by experiment: {len(done.explanations)} lines, {done.left} left for want of budget, "
          f"{done.probes} probes in {done.seconds:.1f} s, a budget of {budget:.1f} s "
          f"({'within it' if done.seconds <= budget else f'{done.seconds - budget:.1f} s over'})")


_SPENT = [0.0]  # seconds this process spent in diagnosis


def _timed(function):
    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _SPENT[0] += time.perf_counter() - started
    return timed


def pytest_configure(config) -> None:
    """As a pytest plugin (-p bench.diagnosis_benchmark): no diagnosis where CONFORMANCE_NO_DIAGNOSIS
    is set; where CONFORMANCE_DIAGNOSIS_SECONDS names a file, each process adds to it the seconds
    it spent diagnosing."""
    if os.environ.get("CONFORMANCE_NO_DIAGNOSIS"):
        verdict_module.diagnose = lambda *a, **k: []
        verdict_module.differences_lie = lambda *a, **k: None
    elif os.environ.get("CONFORMANCE_DIAGNOSIS_SECONDS"):
        verdict_module.diagnose = _timed(verdict_module.diagnose)
        verdict_module.differences_lie = _timed(verdict_module.differences_lie)


def pytest_unconfigure(config) -> None:
    if _SPENT[0] and os.environ.get("CONFORMANCE_DIAGNOSIS_SECONDS"):
        with open(os.environ["CONFORMANCE_DIAGNOSIS_SECONDS"], "a", encoding="utf-8") as spent:
            spent.write(f"{_SPENT[0]}\n")


def whole_runs(backend: str, rounds: int) -> None:
    command = [sys.executable, "-m", "pytest", "conformance", f"--backend={backend}", "-n", str(WORKERS), "-q",
               "-p", "bench.diagnosis_benchmark", "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    times: dict[bool, list[float]] = {True: [], False: []}
    spent: list[float] = []  # per run with diagnosis: the seconds its workers spent in it, together
    # untimed: the first run after a change computes every item's oracle again (pytest's cache)
    subprocess.run(command, capture_output=True, text=True, check=False)
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(rounds):
            for diagnosing in (False, True):
                seconds = Path(scratch, f"{round_}.txt")
                env = {**os.environ, **({"CONFORMANCE_DIAGNOSIS_SECONDS": str(seconds)} if diagnosing
                                        else {"CONFORMANCE_NO_DIAGNOSIS": "1"})}
                started = time.perf_counter()
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                times[diagnosing].append(time.perf_counter() - started)
                if diagnosing:
                    spent.append(sum(float(line) for line in seconds.read_text().split()) if seconds.exists() else 0.0)
                print(f"{'with' if diagnosing else 'without':8} {times[diagnosing][-1]:6.1f} s  "
                      f"{(done.stdout.strip().splitlines() or [''])[-1]}", flush=True)
    best = {k: min(v) for k, v in times.items()}
    print(f"{backend}: best of {rounds}: {best[False]:.1f} s without diagnosis, {best[True]:.1f} s with "
          f"(+{100 * (best[True] / best[False] - 1):.1f}%)")
    # The difference of two whole runs moves with the machine's load (two identical runs differ by
    # up to a fifth here); the time spent in diagnosis itself, shared by the 2 workers, does not.
    own = min(spent) / WORKERS
    print(f"{backend}: diagnosis itself: {min(spent):.1f} s in all, {own:.1f} s per worker "
          f"(+{100 * own / best[False]:.1f}% of the run without it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--share", type=int, default=4)
    parser.add_argument("--defects", default="dilations_ignored,accumulator_starts_at_zero")
    parser.add_argument("--backend", help="time whole runs of the suite against this backend instead")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--unlisted", help="a backend of tests/meta/support/unlisted_bugs.py whose bug the mutant gets too")
    args = parser.parse_args()
    if args.backend:
        whole_runs(args.backend, args.rounds)
        return
    names = tuple(args.defects.split(","))
    backend = MutantBackend(combined(names) if len(names) > 1 else mutant(names[0]))
    if args.unlisted:
        backend = WithAnUnlistedBug(backend, getattr(unlisted_bugs, args.unlisted)())
    selected = items(args.share)
    judged(backend, selected[:200])  # warm: the oracle's cache, imports
    with mock.patch.object(verdict_module, "diagnose", lambda *a, **k: []), \
            mock.patch.object(verdict_module, "differences_lie", lambda *a, **k: None):
        without, failed, _ = judged(backend, selected)
    records: list = []
    with_diagnosis, _, diagnosed = judged(backend, selected, records)
    print(f"{len(selected)} items, {failed} failures, {diagnosed} diagnosed: judged in {without:.1f} s without "
          f"diagnosis, {with_diagnosis:.1f} s with (+{100 * (with_diagnosis / without - 1):.0f}%)")
    explained(backend, selected, records, with_diagnosis)


if __name__ == "__main__":
    main()

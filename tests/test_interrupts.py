"""Runs stopped at random (seeded) moments, by SIGINT and by SIGKILL, with and without
``-n 2``: each leaves a results.json that validates against its schema, and no process of the run
outlives it.

The moment is drawn after the run's first report write (when the plugin is configured: before
that no code of the suite has run, and no report can exist) within the time a whole run takes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest

from conformance.plugin import PACKAGE_DIR
from tests.support.samples import ctrl_c_restored
from tests.test_isolation import descendants_left

ROOT = PACKAGE_DIR.parent
SCHEMA = json.loads((PACKAGE_DIR / "schema" / "results.schema.json").read_text())
CASES = 12  # x 2 versions: 24 items of 50 ms (tests.meta.support.faulty_backends:Slow)
# Per signal and mode, 6 SIGINT and 6 SIGKILL in all, each at a moment drawn in its own third of
# the window: the window covered evenly (uniform draws needed more runs to leave no wide gap), at
# the price of a pytest start (1 to 4 s of CPU) per run.
RUNS = 3
WINDOW_S = {"-n0": 3.0, "-n2": 4.0}  # about a whole run's length after its first write, on 2 cores
SEED = 20261123
AT_ONCE = 4  # runs under way side by side


def case_file() -> str:
    cases = "".join(f"""
  - name: small{i}
    description: a 2x2 kernel pools a 2x2 plane to one element
    provenance: {{document: test, example: small}}
    versions: [12, 22]
    attributes: {{kernel_shape: [2, 2]}}
    inputs:
      X: {{dtype: float32, data: [[[[1, 2], [3, 4]]]]}}
    outputs:
      Y: {{data: [[[[4]]]]}}
""" for i in range(CASES))
    return "op: MaxPool\ncases:" + cases


def interrupt(directory: Path, mode: str, signal_number: int, delay_s: float) -> dict:
    marker = f"CONFORMANCE_INTERRUPT_RUN={uuid.uuid4()}"
    key, value = marker.split("=")
    results = directory / "out" / "results.json"
    started = time.monotonic()
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-q", "-p", "no:cacheprovider", "--cases=cases",
         "--report=out", "--backend=tests.meta.support.faulty_backends:Slow", *(["-n", "2"] if mode == "-n2" else [])],
        cwd=directory, env={**os.environ, "PYTHONPATH": str(ROOT), key: value},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=ctrl_c_restored)
    deadline = time.monotonic() + 120
    while not results.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(delay_s)
    run.send_signal(signal_number)
    code = run.wait(timeout=120)
    deadline = time.monotonic() + 10  # xdist workers and watchdogs see their pipes close
    while (left := descendants_left(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    print(f"{mode} {signal.Signals(signal_number).name} {delay_s:.2f}: exit {code}, {time.monotonic() - started:.1f} s")
    return {"code": code, "report": json.loads(results.read_text()), "left": left}


@pytest.mark.slow
def test_runs_stopped_at_random_moments_leave_valid_reports_and_no_process(tmp_path):
    rng = random.Random(SEED)
    plans = []  # (directory, mode, signal name, delay): drawn in order, whatever order the runs end in
    for number, (mode, name) in enumerate((m, s) for m in WINDOW_S for s in ("SIGINT", "SIGKILL") for _ in range(RUNS)):
        directory = tmp_path / str(number)
        (directory / "cases").mkdir(parents=True)
        (directory / "cases" / "small.yaml").write_text(case_file())
        share = WINDOW_S[mode] / RUNS
        plans.append((directory, mode, name, share * (number % RUNS) + rng.uniform(0, share)))
    # Each run waits most of its time (for its first write, its moment, the 50 ms items): several
    # at once, each with its own marker for the processes it leaves.
    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        results = list(pool.map(lambda plan: interrupt(plan[0], plan[1], getattr(signal, plan[2]), plan[3]), plans))
    stopped_midway = 0
    for (_, mode, name, delay_s), result in zip(plans, results):
        report, where = result["report"], f"{name} {mode} after {delay_s:.2f} s"
        jsonschema.validate(report, SCHEMA)
        assert result["left"] == [], where
        assert report["partial"] == (report["finished"] is None), where
        assert report["partial"] or len(report["items"]) == 2 * CASES, where
        if result["code"] == pytest.ExitCode.INTERRUPTED:
            assert report["partial"] and report["interrupted"], where
        if name == "SIGKILL":  # killed, or it had finished cleanly before the signal landed
            assert not report["interrupted"], where
            assert result["code"] == -signal.SIGKILL or (result["code"] == 0 and not report["partial"]), where
        stopped_midway += report["partial"]
    assert stopped_midway >= RUNS  # most signals land while items run, not after the end


def test_a_run_killed_at_half_leaves_a_journal_whose_partial_report_holds_every_finished_item(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "small.yaml").write_text(case_file())
    journal = tmp_path / "out" / "results.journal.jsonl"
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-q", "-p", "no:cacheprovider", "--cases=cases",
         "--report=out", "--backend=tests.meta.support.faulty_backends:Slow"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None and (
            not journal.exists() or journal.read_text().count("\n") <= CASES):  # the header and half the items
        time.sleep(0.01)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=60)
    finished = [json.loads(line)["record"]["id"] for line in journal.read_text().splitlines()[1:]]
    assert CASES <= len(finished) < 2 * CASES
    done = subprocess.run([sys.executable, "-m", "conformance", "report", str(journal), "-o", "partial"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "partial" / "summary.md").read_text()
    assert "**Partial run** (interrupted)" in summary and f"| {len(finished)} |" in summary


def test_the_results_file_is_not_rewritten_as_records_arrive(tmp_path):
    """A record costs one journal line, whatever the run's size: results.json is written at the end."""
    from conformance.report.writer import JOURNAL_FILE, RESULTS_FILE, Results

    results = Results({"backends": []}, tmp_path)
    for number in range(2000):
        results.add({"id": f"MaxPool-12/x{number}[float32]", "backend": "b", "outcome": "pass"})
    assert not (tmp_path / RESULTS_FILE).exists()
    assert (tmp_path / JOURNAL_FILE).read_text().count("\n") == 2001

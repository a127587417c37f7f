"""An interrupted or killed run leaves a valid report that says it is partial; a run replays
exactly from its seed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conformance.plugin import PACKAGE_DIR
from tests.samples import SMALL_CASE

ROOT = PACKAGE_DIR.parent


def start(tmp_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-q", "-p", "no:cacheprovider",
         f"--report={tmp_path / 'out'}", *args],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def report(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "results.json").read_text())


def wait_for_a_partial_report(tmp_path: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        path = tmp_path / "out" / "results.json"
        if path.exists() and report(tmp_path)["items"]:
            return
        time.sleep(0.2)
    raise AssertionError("no partial report appeared")


def test_ctrl_c_leaves_a_partial_report_marked_interrupted(tmp_path):
    run = start(tmp_path, "--backend=tests.faulty_backends:Slow", "--isolation=none")
    wait_for_a_partial_report(tmp_path)
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 2  # pytest's "interrupted"
    written = report(tmp_path)
    assert written["partial"] and written["interrupted"] and written["finished"] is None
    assert 0 < len(written["items"]) < 4000


def test_a_killed_run_leaves_its_last_partial_report(tmp_path):
    run = start(tmp_path, "--backend=tests.faulty_backends:Slow", "--isolation=none")
    wait_for_a_partial_report(tmp_path)
    run.kill()
    run.wait(timeout=60)
    written = report(tmp_path)  # valid JSON: it is only ever replaced whole
    assert written["partial"] and not written["interrupted"] and written["items"]


def test_a_worker_that_dies_costs_its_item_and_the_run_goes_on(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "small.yaml").write_text(SMALL_CASE)
    run = start(tmp_path, "--backend=tests.faulty_backends:KillsItsProcessAtVersion22", "--isolation=none",
                "-n", "2", "--cases", str(tmp_path / "cases"))
    assert run.wait(timeout=300) == 1
    outcomes = {r["id"]: r["outcome"] for r in report(tmp_path)["items"]}
    assert outcomes.pop("MaxPool-22/small[float32]") == "crash"
    assert set(outcomes.values()) == {"pass"} and len(outcomes) == 5
    assert not report(tmp_path)["partial"]


def test_the_same_seed_gives_the_same_results(tmp_path):
    runs = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        assert start(tmp_path / name, "--seed=7", "-n", "2", "-k", "ranks or explicit_pads").wait(timeout=600) == 0
        written = report(tmp_path / name)
        assert written["environment"]["seed"] == 7
        runs.append([{k: v for k, v in r.items() if k != "duration_s"} for r in written["items"]])
    assert runs[0] == runs[1] and len(runs[0]) > 500

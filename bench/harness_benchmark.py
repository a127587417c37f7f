"""The harness's four figures of issue 23, each as a ratio against its floor or goal (at most 1
meets it), measured side by side on this machine now:

- suite / floor: the whole suite against ONNX Runtime (`pytest conformance --backend=ort -n 2`,
  pytest's cache warm: the expanded items and their oracles) over the floor, every exported
  model loaded and run by onnxruntime in one tight loop (goal: 3 or less); beside it, pytest and
  pytest-xdist alone on as many empty tests, the part of the ratio no change to the harness removes;
- the project's tests (`pytest tests -n auto`) over 4 minutes (with --tests: it takes minutes);
- 200 configurations a second over the fuzz's throughput against ONNX Runtime;
- a pasted repro line's pytest time (warm cache) over 1 second.

    python -m bench.harness_benchmark [--repeats 3] [--tests]

Runs alternate (suite, floor, suite, ...) and medians are printed: other work on the machine
moves absolute times, less so their ratios.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPRO_ID = "MaxPool-12/infinities/1d-y[float32]"
GOALS = {"suite": 3.0, "tests_s": 240.0, "fuzz_per_s": 200.0, "repro_s": 1.0}


def floor_s(exported: Path) -> float:
    """Every exported model, in manifest order, loaded and run by onnxruntime in one loop, on
    its default options."""
    import onnx
    import onnxruntime
    from onnx import numpy_helper

    onnxruntime.set_default_logger_severity(4)  # refusals are expected: their log lines are not
    options = onnxruntime.SessionOptions()
    cases = []
    for model in sorted(exported.glob("*/*/model.onnx")):
        inputs = [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(model.parent.glob("test_data_set_0/input_*.pb"))]
        cases.append((model.read_bytes(), inputs))
    started = time.perf_counter()
    for model_bytes, inputs in cases:
        try:
            session = onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
            session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})
        except Exception:  # noqa: BLE001 - a refusal costs what it costs, as in the suite
            pass
    return time.perf_counter() - started


def empty_suite_s(count: int) -> float:
    """pytest and pytest-xdist alone: ``count`` empty tests with -n 2, as the suite runs, this
    project's plugin loaded as it is in every run. No change to the harness goes below it."""
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "test_empty.py").write_text(
            f"import pytest\n\n\n@pytest.mark.parametrize('number', range({count}))\ndef test_empty(number):\n    pass\n")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "test_empty.py", "-n", "2", "-q", "-p", "no:cacheprovider"],
                       cwd=directory, capture_output=True, check=True)
        return time.perf_counter() - started


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout + done.stderr


def suite_s() -> float:
    return timed([sys.executable, "-m", "pytest", "conformance", "--backend=ort", "-n", "2", "-q"])[0]


def repro_s() -> tuple[float, float]:
    """(pytest's own time, wall) of the README's repro line."""
    wall, output = timed([sys.executable, "-m", "pytest", "conformance", "--backend=ort", "--seed=0", "-k", REPRO_ID])
    reported = re.findall(r" in ([0-9.]+)s", output)
    return float(reported[-1]) if reported else float("nan"), wall


def fuzz_per_s(budget: int) -> float:
    from bench.fuzz_benchmark import measure

    return measure("ort", budget)["per_second"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=200, help="fuzz configurations per measurement")
    parser.add_argument("--tests", action="store_true", help="also time `pytest tests -n auto` once (minutes)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([sys.executable, "-m", "conformance", "export", directory], cwd=ROOT, check=True,
                       capture_output=True)
        suite_s()  # pytest's cache warm: the expanded items and their oracles, as in every run after the first
        count = len(json.loads(Path(directory, "manifest.json").read_text())["tests"])
        suites, floors, empties = [], [], []
        for _ in range(args.repeats):
            suites.append(suite_s())
            floors.append(floor_s(Path(directory)))
            empties.append(empty_suite_s(count))
    repros = [repro_s() for _ in range(args.repeats)]
    fuzz = statistics.median(fuzz_per_s(args.budget) for _ in range(args.repeats))
    suite, floor, empty = statistics.median(suites), statistics.median(floors), statistics.median(empties)
    repro, repro_wall = statistics.median(r[0] for r in repros), statistics.median(r[1] for r in repros)
    print(f"machine: {platform.machine()}, {_cores()} cores, Python {platform.python_version()}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; medians of {args.repeats}")
    print(f"suite / floor      {suite:7.1f} s / {floor:5.1f} s      = {suite / floor:5.2f}  (goal <= {GOALS['suite']:g})")
    print(f"  of which no harness change removes: pytest and xdist alone, {count} empty tests, "
          f"{empty:.1f} s = {empty / floor:.2f} x floor")
    if args.tests:
        tests = timed([sys.executable, "-m", "pytest", "tests", "-n", "auto", "-q"])[0]
        print(f"tests / 4 min      {tests:7.1f} s / {GOALS['tests_s']:.0f} s      = {tests / GOALS['tests_s']:5.2f}  (goal <= 1)")
    print(f"200/s / fuzz       {GOALS['fuzz_per_s']:7.0f} / {fuzz:5.1f} configs/s = "
          f"{GOALS['fuzz_per_s'] / fuzz:5.2f}  (goal <= 1)")
    print(f"repro / 1 s        {repro:7.2f} s (wall {repro_wall:.2f} s) = {repro / GOALS['repro_s']:5.2f}  (goal <= 1)")
    return 0


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    raise SystemExit(main())

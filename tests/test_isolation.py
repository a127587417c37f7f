"""A faulty backend costs its own items only, each with an honest outcome (crash, timeout, error,
or the fail or pass its answer earns), in one line: no traceback reaches the terminal, no process
outlives the run, and the report is complete.

All the faulty backends run side by side in one run (two items each), once isolated and once,
for those a test process survives, with ``--isolation=none``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import jsonschema
import pytest

from conformance.plugin import PACKAGE_DIR

ROOT = PACKAGE_DIR.parent
TIMEOUT_S = 3
MEMORY_LIMIT_MIB = 2048

WITH_INDICES = """\
op: MaxPool
cases:
  - name: small
    description: a 2x2 kernel pools a 2x2 plane to one element, and points at it
    provenance: {document: test, example: small}
    versions: [12, 22]
    attributes: {kernel_shape: [2, 2]}
    inputs:
      X: {dtype: float32, data: [[[[1, 2], [3, 4]]]]}
    outputs:
      Y: {data: [[[[4]]]]}
      Indices: {data: [[[[3]]]]}
"""

GARBAGE = "returned garbage: "
# backend -> (outcome of each of its two items, words its messages hold); the same answer gives
# the same outcome with or without isolation
SAME_EITHER_WAY = {
    "Raises": (["error"] * 2, "RuntimeError: kernel exploded"),
    "RaisesKeyboardInterrupt": (["error"] * 2, "KeyboardInterrupt"),
    "RaisesSystemExit": (["error"] * 2, "SystemExit: 3"),
    "RaisesGeneratorExit": (["error"] * 2, "GeneratorExit: a BaseException"),
    "RaisesAnExceptionWhoseStrRaises": (["error"] * 2, "UnprintableError: (its str() raised ValueError)"),
    "RaisesAHugeMessage": (["error"] * 2, "RuntimeError: xxxx"),
    "ShellsOut": (["error"] * 2, "CalledProcessError: Command"),
    "RaisesAMultilineError": (["error"] * 2, "RuntimeError: Exception from src/core/src/node.cpp:1"),
    "ReturnsAString": (["error"] * 2, GARBAGE + "returned str, not a list of arrays"),
    "ReturnsLists": (["error"] * 2, GARBAGE + "output 0 is list, not a numpy array"),
    "ReturnsTooMany": (["error"] * 2, GARBAGE + "returned 4 outputs for a node with 2 (Y, Indices)"),
    "ReturnsNone": (["error"] * 2, GARBAGE + "returned NoneType, not a list of arrays"),
    "ReturnsAZeroDimensionalArray": (["error"] * 2, GARBAGE + "returned ndarray, not a list of arrays"),
    "ReturnsABareArray": (["error"] * 2, GARBAGE + "returned ndarray, not a list of arrays"),
    "ReturnsUnpicklableObjects": (["error"] * 2, GARBAGE + "output 0 is function, not a numpy array"),
    "ReturnsAnObjectArray": (["error"] * 2, GARBAGE + "output 0 has element type object, which no tensor has"),
    "ReturnsAHugeArray": (["error"] * 2, GARBAGE + "the outputs hold more than 1024 MiB"),
    "ReturnsTheWrongElementType": (["fail"] * 2, "Y: element type float64, expected float32"),
    "ReturnsBigEndian": (["fail"] * 2, "Y: element type >f4, expected float32"),
    "ReturnsTheWrongShape": (["fail"] * 2, "Y: shape [1], expected [1, 1, 1, 1]"),
    "MutatesItsInputs": (["fail"] * 2, "Indices: 1 of 1 indices do not point at their window's maximum"),
    "ReturnsZerosThatClaimToBeRight": (["fail"] * 2, "Y: 1 of 1 elements differ"),
    "ReturnsAnArrayThatExitsOnUnpickling": (["pass"] * 2, ""),
    "ChangesDirectory": (["pass"] * 2, ""),
    "SetsSignals": (["pass"] * 2, ""),
}
ISOLATED_ONLY = {
    "ShellsOutWithoutCapture": (["error"] * 2, "CalledProcessError: Command"),
    "Segfaults": (["crash"] * 2, "the backend's process was killed by SIGSEGV"),
    "Aborts": (["crash"] * 2, "killed by SIGABRT"),
    "ExitsItsProcess": (["crash"] * 2, "exited with status 3"),
    "ExitsFromAThread": (["crash"] * 2, "exited with status 4"),
    "ExitsAfterAnswering": (["pass", "crash"], "exited with status 6, after it answered the previous item"),
    "ClosesItsChannel": (["crash"] * 2, "exited with status 1"),
    "ForksThenSegfaults": (["crash"] * 2, "killed by SIGSEGV"),
    "Hangs": (["timeout"] * 2, f"no answer within {TIMEOUT_S} s"),
    "ExhaustsMemory": (["error"] * 2, "MemoryError"),
    "LeaksMemorySlowly": (["pass", "error"], "MemoryError"),
    "ForksAChildThatOutlivesIt": (["pass"] * 2, ""),
    "LeavesThreadsRunning": (["pass"] * 2, ""),
    "FloodsStdoutAndStderr": (["pass"] * 2, ""),
    "ClosesStandardStreams": (["pass"] * 2, ""),
}
ISOLATED = {**SAME_EITHER_WAY, **ISOLATED_ONLY}


def descendants_left(marker: str) -> list[str]:
    """Live processes (zombies aside) whose environment carries ``marker``: those the run started."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
                if state != "Z":
                    found.append(f"{entry.name} {(entry / 'cmdline').read_bytes()[:120]!r}")
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def run_side_by_side(directory: Path, backends: dict, *args: str) -> dict:
    """Run ``backends`` side by side; the report, the terminal output, and the processes left."""
    (directory / "cases").mkdir()
    (directory / "cases" / "small.yaml").write_text(WITH_INDICES)
    marker = f"CONFORMANCE_FAULTY_RUN={uuid.uuid4()}"
    key, value = marker.split("=")
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-p", "no:cacheprovider", "--cases=cases", "--report=out",
         "--backend=" + ",".join(f"tests.meta.support.faulty_backends:{b}" for b in backends), *args],
        cwd=directory, env={**os.environ, "PYTHONPATH": str(ROOT), key: value},
        capture_output=True, timeout=600)
    wall_s = time.monotonic() - started
    deadline = time.monotonic() + 5  # the watchdogs' SIGKILL may take a moment to land
    while (left := descendants_left(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    report = json.loads((directory / "out" / "results.json").read_text())
    return {"report": report, "run": run, "left": left, "wall_s": wall_s,
            "terminal": run.stdout.decode(errors="replace") + run.stderr.decode(errors="replace")}


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    return run_side_by_side(tmp_path_factory.mktemp("isolated"), ISOLATED, f"--conformance-timeout={TIMEOUT_S}",
                            f"--conformance-memory-limit={MEMORY_LIMIT_MIB}")


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    return run_side_by_side(tmp_path_factory.mktemp("in_process"), SAME_EITHER_WAY, "--isolation=none")


def outcomes_of(report: dict, backend: str) -> list[dict]:
    return [r for r in sorted(report["items"], key=lambda r: r["id"]) if r["backend"] == backend]


@pytest.mark.parametrize("backend", sorted(ISOLATED))
def test_an_isolated_faulty_backend_costs_its_own_items_with_an_honest_outcome(isolated, backend):
    outcomes, words = ISOLATED[backend]
    records = outcomes_of(isolated["report"], backend)
    assert [r["outcome"] for r in records] == outcomes, [r["message"] for r in records]
    failing = [r for r in records if r["outcome"] != "pass"]
    assert all(words in r["message"] and "\n" not in r["message"] for r in failing), failing[0]["message"]


@pytest.mark.parametrize("backend", sorted(SAME_EITHER_WAY))
def test_without_isolation_the_same_answer_gets_the_same_outcome(in_process, backend):
    outcomes, words = SAME_EITHER_WAY[backend]
    records = outcomes_of(in_process["report"], backend)
    assert [r["outcome"] for r in records] == outcomes, [r["message"] for r in records]
    assert all(words in r["message"] for r in records if r["outcome"] != "pass")


@pytest.mark.parametrize("mode", ["isolated", "in_process"])
def test_the_run_survives_whole_in_one_line_per_item_and_leaves_no_process(mode, request):
    result = request.getfixturevalue(mode)
    backends = ISOLATED if mode == "isolated" else SAME_EITHER_WAY
    report = result["report"]
    assert result["run"].returncode == 1, result["terminal"][-3000:]  # failures; not a usage or internal error
    jsonschema.validate(report, json.loads((PACKAGE_DIR / "schema" / "results.schema.json").read_text()))
    assert not report["partial"] and len(report["items"]) == 2 * len(backends)
    assert "Traceback" not in result["terminal"] and "INTERNALERROR" not in result["terminal"]
    assert len(result["terminal"]) < 2_000_000  # the flood stays in the backend's pipe
    assert result["left"] == []


@pytest.mark.parametrize("mode", ["isolated", "in_process"])
def test_the_report_keeps_the_whole_reason_bounded(mode, request):
    report = request.getfixturevalue(mode)["report"]
    for record in outcomes_of(report, "ShellsOut"):  # what the command said on its stderr, and stdout
        assert "line 1: bad pads\nline 2: kernel_shape [2, 2] needs rank 4" in record["reason"]
        assert "stdout:\nloading kernel" in record["reason"]
    for record in outcomes_of(report, "RaisesAMultilineError"):  # every line, not only the first
        assert "Kernel after dilation is larger than the padded data" in record["reason"]
    for record in outcomes_of(report, "ShellsOutWithoutCapture"):  # its stderr, as the child's output
        assert "cc: error: unknown type bf16" in record["reason"]
    for record in outcomes_of(report, "RaisesAHugeMessage"):  # 5,000,000 characters, bounded
        assert 1000 < len(record["reason"]) <= 8000 + len("... (4999999 more characters)")


def test_a_crash_is_seen_at_once_even_when_a_forked_child_holds_the_pipe(isolated):
    """Seen when the process dies, not when its forked child lets go of the pipe (that would take the
    timeout, and be one). Each item's time also holds its valid twin's run, in the fresh process
    that follows a crash (a crash on the minimal valid model would name the item's line): as long
    as the same crash of a backend that forks nothing, give or take a process start."""
    forks = [r["duration_s"] for r in outcomes_of(isolated["report"], "ForksThenSegfaults")]
    plain = [r["duration_s"] for r in outcomes_of(isolated["report"], "Segfaults")]
    assert max(forks) < TIMEOUT_S and max(forks) < max(plain) + 1.0, (forks, plain)


def test_a_crash_shows_what_the_backend_last_wrote(isolated):
    record = outcomes_of(isolated["report"], "ClosesItsChannel")[0]
    assert record["outcome"] == "crash"
    assert record["message"].endswith("its last output: conformance: the runner's channel broke (OSError: [Errno 9] Bad file descriptor)")


def test_a_crash_restarts_the_backend_for_the_next_item(tmp_path, monkeypatch):
    monkeypatch.setenv("FAULTY_MARKER", str(tmp_path / "crashed-once"))
    result = run_side_by_side(tmp_path, {"CrashesOnTheFirstItemOnly": None})
    assert sorted(r["outcome"] for r in result["report"]["items"]) == ["crash", "pass"]


INHERITED_LIMIT = """\
import resource, sys
from pathlib import Path
from conformance.backends.isolation.runner import IsolatedBackend
from conformance.expand.items import load_items
from conformance.judge.verdict import SuiteError, evaluate
from conformance.load.cases import load_registry

limit = 3 * 2**30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
runner = IsolatedBackend("reference", "reference", "0", 30, 8192)
print(runner.details()["isolation"])
cases = Path(sys.argv[1])
items = [i for i in load_items(cases) if "MaxPool-12/" in i.id]
print(evaluate(items[0], runner, 0, load_registry(cases)).outcome.value)
runner.close()
runner.memory_limit_mib = 10**6  # above the inherited hard limit: the child cannot set it
try:
    print(evaluate(items[0], runner, 0, load_registry(cases)).outcome.value)
except SuiteError as e:
    print("suite error:", e)
"""


def test_an_inherited_address_space_limit_is_taken_said_and_never_charged_to_the_backend(tmp_path):
    """Under ``ulimit -v`` below the default limit, every isolated item was a crash ("not allowed
    to raise maximum limit"): the lower limit applies and the header says so; a limit the child
    still cannot set is the suite's error, not the backend's crash."""
    (tmp_path / "small.yaml").write_text(WITH_INDICES)
    result = subprocess.run([sys.executable, "-c", INHERITED_LIMIT, str(tmp_path)], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    header, first, second = result.stdout.splitlines()[-3:]
    assert "memory limit 3072 MiB (inherited by this process, below the 8192 MiB asked)" in header, result.stderr
    assert first == "pass"
    assert second.startswith("suite error: the suite could not isolate the backend: cannot set the memory limit")


KILLER = """\
import os, signal
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_{when}(item):
    if "MaxPool-22/small" in item.nodeid and os.environ.get("PYTEST_XDIST_WORKER"):
        os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("when", ["setup", "call"])
@pytest.mark.slow
def test_an_xdist_worker_killed_mid_item_leaves_that_item_as_a_crash_and_a_summary_that_agrees(tmp_path, when):
    """SIGKILL of the worker before its setup reported, or during the call: the item is in
    results.json as a crash, with the worker's fate, and the summary matches pytest's exit code."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "small.yaml").write_text(WITH_INDICES)
    (tmp_path / "killer.py").write_text(KILLER.format(when=when))
    run = subprocess.run([sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-p", "no:cacheprovider", "-p", "killer",
                          "--cases=cases", "--report=out", "--backend=reference", "-n", "2"],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
                         capture_output=True, text=True, timeout=300)
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    crashed = [r for r in report["items"] if r["outcome"] == "crash"]
    assert run.returncode == 1, run.stdout[-3000:]
    assert [r["id"] for r in crashed] == ["MaxPool-22/small[float32]"], report["summary"]
    assert "worker" in crashed[0]["message"] and "died" in crashed[0]["message"]
    assert report["summary"] == {"crash": 1, "pass": 1} and crashed[0]["file"].endswith("small.yaml")

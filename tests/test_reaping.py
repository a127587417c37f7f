"""No process a backend starts outlives its child: one that left the child's process group, a
daemon in a session of its own (the item answered, or the child crashed after starting it), are
all killed when the runner closes the child, and when the runner itself dies (the watchdog)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import BackendCrashed
from conformance.backends.isolation.runner import IsolatedBackend
from tests.test_reference_vs_naive import single_node_model

ESCAPES = ["LeavesAGrandchildInAGroupOfItsOwn", "LeavesADaemonInASessionOfItsOwn", "EscapesItsSession",
           "ForksAChildThatOutlivesIt"]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return False


def all_gone(pids: list[int], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def item():
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    return model, {"X": np.array([[[1, 3, 2]]], np.float32)}


@pytest.mark.parametrize("backend", ESCAPES)
def test_every_process_the_backend_started_dies_when_its_child_is_closed(backend, tmp_path, monkeypatch):
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("FAULTY_PIDS", str(pids_file))
    runner = IsolatedBackend(f"tests.meta.support.faulty_backends:{backend}", backend, "0", timeout_s=30, memory_limit_mib=None)
    try:
        try:
            runner.run(*item())
            crashed = False
        except BackendCrashed:  # EscapesItsSession crashes once its daemon is out: the runner closes the child
            crashed = True
        pids = [int(p) for p in pids_file.read_text().split()]
        assert pids and (crashed or all(alive(p) for p in pids))
    finally:
        runner.close()
    assert all_gone(pids), [p for p in pids if alive(p)]


def test_the_watchdog_kills_them_when_the_runner_is_killed(tmp_path):
    pids_file = tmp_path / "pids"
    script = (
        "import sys, time, numpy as np\n"
        "from conformance.backends.isolation.runner import IsolatedBackend\n"
        "from tests.test_reaping import item\n"
        "runner = IsolatedBackend('tests.meta.support.faulty_backends:LeavesADaemonInASessionOfItsOwn', 'x', '0', timeout_s=30, "
        "memory_limit_mib=None)\n"
        "runner.run(*item())\n"
        "print('ran', flush=True)\n"
        "time.sleep(3600)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runner = subprocess.Popen([sys.executable, "-c", script], cwd=root, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "FAULTY_PIDS": str(pids_file)})
    try:
        assert runner.stdout.readline() == "ran\n"
        pids = [int(p) for p in pids_file.read_text().split()]
        assert pids and all(alive(p) for p in pids)
    finally:
        runner.kill()
        runner.wait()
    assert all_gone(pids), [p for p in pids if alive(p)]

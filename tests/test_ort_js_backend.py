"""The ort-js backend: its setup's one-line errors, the Node server's framing, and a server that dies
mid-item (one `crash`). Tests that run ONNX Runtime need `conformance setup ort-js` and skip
without it; the setup's errors and the usage error need neither Node's packages nor a GPU."""

from __future__ import annotations

import os
import signal
import stat
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto

from conformance.backends import BackendCrashed, load_backend, ort_js_setup
from conformance.backends.isolation.runner import IsolatedBackend
from conformance.backends.isolation.wire import frame, read_frame
from conformance.backends.ort_js import OrtJsBackend, ServerDied
from conformance.cli import main
from tests.conftest import requires_tool
from tests.test_reference_vs_naive import single_node_model

ROOT = Path(__file__).resolve().parents[1]
SET_UP = not ort_js_setup.problems("cpu")
needs_setup = requires_tool("; ".join(ort_js_setup.problems("cpu")) or None)


def fake_program(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def max_pool_1d() -> tuple:
    model = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)], kernel_shape=[2])
    return model, {"X": np.array([[[1, 3, 2]]], np.float32)}


# --- setup: what is missing, in one line each ---


def test_without_node_setup_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["setup", "ort-js"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "no `node` on PATH: install Node.js >= 18" in out


def test_an_old_node_is_named_with_its_version(tmp_path, monkeypatch, capsys):
    fake_program(tmp_path, "node", "echo v16.20.2")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["setup", "ort-js"]) == 1
    assert capsys.readouterr().out == "conformance setup ort-js: node v16.20.2 is too old: ort-js needs Node.js >= 18\n"


def test_wasm_needs_a_node_that_can_leave_out_the_trap_handler(tmp_path, monkeypatch):
    fake_program(tmp_path, "node", "echo v18.19.0")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ort_js_setup.node_problem("webgpu") is None
    assert ort_js_setup.node_problem("wasm") == "node v18.19.0 is too old for ep=wasm: it needs Node.js >= 20.15"


def test_a_failing_npm_ci_is_one_line_with_its_last_words(tmp_path, monkeypatch, capsys):
    fake_program(tmp_path, "node", "echo v20.1.0")
    fake_program(tmp_path, "npm", "echo 'npm error 404 Not Found' >&2; exit 1")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["setup", "ort-js"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "npm ci failed" in out and out.rstrip().endswith("npm error 404 Not Found")
    assert (tmp_path / "cache/maxpool-conformance/ort-js/package-lock.json").is_file()


def test_a_missing_swiftshader_driver_is_named_with_its_package(monkeypatch, tmp_path):
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    monkeypatch.setattr(ort_js_setup, "ICD", str(tmp_path / "vk_swiftshader_icd.json"))
    assert ort_js_setup.icd_problem().endswith("apt-get install chromium")
    assert ort_js_setup.icd_problem() not in ort_js_setup.problems("cpu")


def test_without_the_cache_the_backend_names_the_setup_command(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(ImportError, match=r"not installed in .*: run `conformance setup ort-js`"):
        load_backend("ort-js[ep=cpu]")


def test_backends_lists_it_with_what_is_missing(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["backends"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ort-js ")]
    assert "not available: ort-js[ep=webgpu] cannot run here:" in line and "run `conformance setup ort-js`" in line


@requires_tool("; ".join(ort_js_setup.problems("webgpu")) or None)
def test_backends_lists_its_eps_once_set_up(capsys):
    assert main(["backends"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ort-js ")]
    assert line.endswith("(options: ep=cpu|webgpu|wasm)")


def test_a_cache_of_other_versions_is_stale(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = ort_js_setup.cache_directory()
    (cache / "node_modules/onnxruntime-node").mkdir(parents=True)
    (cache / "node_modules/onnxruntime-node/package.json").write_text("{}")
    (cache / "package-lock.json").write_text("{}")
    assert "not the pinned ones: run `conformance setup ort-js` again" in ort_js_setup.cache_problem()


def test_an_unknown_ep_is_refused():
    with pytest.raises(ValueError, match="use one of cpu, webgpu, wasm"):
        OrtJsBackend(ep="cuda")


def test_without_setup_the_suite_exits_4_naming_the_command(tmp_path):
    run = subprocess.run([sys.executable, "-m", "pytest", "conformance", "--backend=ort-js[ep=cpu]", "-q",
                          "-p", "no:cacheprovider", "-k", "nothing"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert run.returncode == 4
    assert "run `conformance setup ort-js`" in run.stderr


# --- the server's protocol ---


def server(ep: str, modules: Path) -> tuple[subprocess.Popen, int, int]:
    requests, answers = os.pipe(), os.pipe()
    process = subprocess.Popen(["node", str(ort_js_setup.SERVER), str(modules), ep, str(requests[0]), str(answers[1])],
                               pass_fds=(requests[0], answers[1]), stderr=subprocess.PIPE,
                               env=ort_js_setup.environment(ep))
    os.close(requests[0])
    os.close(answers[1])
    return process, requests[1], answers[0]


@requires_tool(ort_js_setup.node_problem())
def test_a_server_that_cannot_load_onnxruntime_answers_one_framed_line(tmp_path):
    process, requests, answers = server("cpu", tmp_path)
    header, buffers = read_frame(answers)
    assert header["kind"] == "failed" and header["message"].startswith(f"cannot load onnxruntime from {tmp_path}")
    assert buffers == [] and process.wait(timeout=30) == 0


@needs_setup
def test_a_model_and_its_inputs_cross_and_outputs_come_back_typed_and_shaped():
    model, inputs = max_pool_1d()
    (y,) = load_backend("ort-js[ep=cpu]").run(model, inputs)
    assert y.dtype == np.float32 and y.tolist() == [[[3, 3]]]


@needs_setup
def test_a_bad_frame_ends_the_server_with_a_message():
    process, requests, answers = server("cpu", ort_js_setup.node_modules())
    for chunk in frame({"pin": True}, [b"not a model"]):
        os.write(requests, chunk)
    assert read_frame(answers)[0]["kind"] == "failed"
    os.write(requests, struct.pack("<QI", 4, 9) + b"{}{}")  # a header longer than its frame
    assert process.wait(timeout=30) == 3
    assert "a truncated or malformed frame" in process.stderr.read().decode()


@needs_setup
def test_a_refusal_is_an_error_and_a_missing_kernel_unsupported():
    from conformance.backends import Unsupported

    backend = load_backend("ort-js[ep=cpu]")
    unpool = single_node_model("MaxUnpool", 11, [("X", TensorProto.DOUBLE), ("I", TensorProto.INT64)],
                               [("Y", TensorProto.DOUBLE)], kernel_shape=[2])  # float only on the CPU provider
    with pytest.raises(Unsupported, match="Could not find an implementation for MaxUnpool"):
        backend.run(unpool, {"X": np.ones((1, 1, 1), np.float64), "I": np.zeros((1, 1, 1), np.int64)})
    padded = single_node_model("MaxPool", 12, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)],
                               kernel_shape=[2], pads=[2, 2])  # valid; ONNX Runtime's check refuses it
    with pytest.raises(RuntimeError, match="Pad should be smaller than kernel") as info:
        backend.run(padded, {"X": np.ones((1, 1, 3), np.float32)})
    assert not isinstance(info.value, Unsupported)


class KillsItsServerOnTheSecondItem(OrtJsBackend):
    """ort-js on cpu whose Node server is killed while it holds the second item."""

    def __init__(self):
        super().__init__(ep="cpu")
        self.items = 0

    def _exchange(self, header, buffers):
        self.items += "inputs" in header
        if self.items == 2 and "inputs" in header:  # after run() found the server alive
            os.kill(self.server.pid, signal.SIGKILL)
            self.server.wait()
        return super()._exchange(header, buffers)


@needs_setup
def test_a_server_that_dies_mid_item_costs_that_item_one_crash():
    spec = f"{__name__}:KillsItsServerOnTheSecondItem"
    runner = IsolatedBackend(spec, "dies", "0", timeout_s=60, memory_limit_mib=None)
    model, inputs = max_pool_1d()
    try:
        assert runner.run(model, inputs)[0].tolist() == [[[3, 3]]]
        with pytest.raises(BackendCrashed, match="ort-js Node server was killed by signal 9 while it held the item"):
            runner.run(model, inputs)
        assert runner.run(model, inputs)[0].tolist() == [[[3, 3]]]  # a fresh child, a fresh server
    finally:
        runner.close()


@needs_setup
def test_in_the_test_process_a_dead_server_is_an_error_and_the_next_item_restarts_it():
    backend = KillsItsServerOnTheSecondItem()
    model, inputs = max_pool_1d()
    backend.run(model, inputs)
    with pytest.raises(ServerDied, match="killed by signal 9"):
        backend.run(model, inputs)
    assert backend.run(model, inputs)[0].tolist() == [[[3, 3]]]
    backend.close()

"""`conformance repro` for any backend: a `module:Class` adapter (or a name another package
registers) is imported by the script itself, with no stub to fill in; and every script's model is
valid under onnx.checker's full check, with the shapes the item has."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import pytest

from conformance.plugin import PACKAGE_DIR
from conformance.scripts import RUNNERS, item_script
from tests.bundled import bundled_items

ROOT = PACKAGE_DIR.parent


def model_of(script: str) -> onnx.ModelProto:
    """The model the script builds (its lines up to the runner)."""
    head = script.split("\n\n\ndef run(", 1)[0].split("\n\n\nclass RunNotFilledIn", 1)[0].split("\n\n\nADAPTER = ", 1)[0]
    namespace: dict = {}
    exec(head, namespace)
    return namespace["model"]


@pytest.fixture(scope="module")
def sample():
    """A valid item of each operator and domain, with and without Indices (a must-reject item's model is
    invalid by design)."""
    chosen: dict = {}
    for item in bundled_items():
        if item.case.reject:
            continue
        key = (item.case.domain, item.case.op, len(item.outputs), item.case.upstream is not None)
        chosen.setdefault(key, item)
    return list(chosen.values())


@pytest.mark.parametrize("backend", [*RUNNERS, "tests.faulty_backends:WrongAtVersion12"])
def test_every_script_s_model_passes_the_full_check(sample, backend):
    for item in sample:
        model = model_of(item_script(item, backend, 0))
        onnx.checker.check_model(model, full_check=True)
        assert [len(o.type.tensor_type.shape.dim) for o in model.graph.output] == \
            [len(o.type.tensor_type.shape.dim) for o in item.model.graph.output]


def test_a_module_class_backend_s_script_runs_the_adapter_from_anywhere(tmp_path):
    item = next(i for i in bundled_items() if i.id == "MaxPool-12/2d_pads[float32]")
    script = tmp_path / "repro.py"
    script.write_text(item_script(item, "tests.faulty_backends:WrongAtVersion12", 0))
    assert "fill in run()" not in script.read_text()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1 and "MISMATCH" in done.stdout, done.stdout + done.stderr  # the adapter's bug, found
    right = next(i for i in bundled_items() if i.id == "MaxPool-11/2d_pads[float32]")
    script.write_text(item_script(right, "tests.faulty_backends:WrongAtVersion12", 0))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "as expected" in done.stdout, done.stdout + done.stderr


def test_an_unknown_backend_still_gets_the_stub_that_exits_2(tmp_path):
    item = next(i for i in bundled_items() if i.id == "MaxPool-12/2d_pads[float32]")
    script = item_script(item, "nowhere.to_be:Found", 0)
    assert "fill in run()" in script

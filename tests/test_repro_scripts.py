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
from conformance.scripts.runners import RUNNERS
from tests.support.bundled import bundled_items, bundled_script

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


@pytest.mark.parametrize("backend", [*RUNNERS, "tests.meta.support.faulty_backends:WrongAtVersion12"])
def test_every_script_s_model_passes_the_full_check(sample, backend):
    for item in sample:
        model = model_of(bundled_script(item, backend))
        onnx.checker.check_model(model, full_check=True)
        assert [len(o.type.tensor_type.shape.dim) for o in model.graph.output] == \
            [len(o.type.tensor_type.shape.dim) for o in item.model.graph.output]


def test_a_module_class_backend_s_script_runs_the_adapter_from_anywhere(tmp_path):
    item = next(i for i in bundled_items() if i.id == "MaxPool-12/2d_pads[float32]")
    script = tmp_path / "repro.py"
    script.write_text(bundled_script(item, "tests.meta.support.faulty_backends:WrongAtVersion12"))
    assert "fill in run()" not in script.read_text()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1 and "MISMATCH" in done.stdout, done.stdout + done.stderr  # the adapter's bug, found
    right = next(i for i in bundled_items() if i.id == "MaxPool-11/2d_pads[float32]")
    script.write_text(bundled_script(right, "tests.meta.support.faulty_backends:WrongAtVersion12"))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "as expected" in done.stdout, done.stdout + done.stderr


def test_an_unknown_backend_still_gets_the_stub_that_exits_2(tmp_path):
    item = next(i for i in bundled_items() if i.id == "MaxPool-12/2d_pads[float32]")
    script = bundled_script(item, "nowhere.to_be:Found")
    assert "fill in run()" in script


class _Kept:
    """A store as a run's cache is one (ItemValues): what the oracle put, read back."""

    def __init__(self):
        self.values = {}

    def get(self, file, item_id):
        return self.values.get((file, item_id))

    def put(self, file, item_id, value):
        self.values[file, item_id] = value


def test_a_script_shows_the_oracle_s_kept_values_and_derives_nothing_again(monkeypatch):
    """The report's scripts read the run's cache, the fuzz's the item it judged last: once the
    oracle has an item's values, writing its script computes nothing."""
    from conformance.judge import oracle
    from conformance.scripts.standalone import item_script
    from tests.support.bundled import bundled_registry

    item = next(i for i in bundled_items() if i.expectation == "derived" and len(i.outputs) == 2)
    kept, last = _Kept(), oracle.LastComputed()
    computed = oracle.script_values(item, 0, bundled_registry(), kept)
    oracle.consult(item, 0, bundled_registry(), last)

    def derives(*args):
        raise AssertionError("the oracle derived an item's outputs again")

    monkeypatch.setattr(oracle, "derive", derives)
    for inputs, expected in (oracle.script_values(item, 0, bundled_registry(), kept), last.script_values(item, 0)):
        assert item_script(item, "ort", 0, inputs, expected) == item_script(item, "ort", 0, *computed)

"""The isolated runner's early start (``IsolatedBackend.start``, ``started``), and ONNX Runtime
in its child answering as in this process."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from conformance.backends import BackendCrashed
from conformance.backends.isolation import child
from conformance.backends.isolation.runner import IsolatedBackend, started
from conformance.fuzz.cases import build_item
from conformance.fuzz.engine import _tiny
from conformance.fuzz.space import select_targets
from tests.meta.support.mutant_backend import REGISTRY


class SlowToLoad:
    """A backend whose loading takes a minute in the child (a runtime importing on a loaded machine)."""

    name, version = "slow-to-load", "0"

    def __init__(self):
        if child.IN_CHILD:
            time.sleep(60)

    def details(self):
        return {}

    def run(self, model, inputs):
        return []


class ExitsWhileLoading(SlowToLoad):
    def __init__(self):
        if child.IN_CHILD:
            os._exit(3)


class FailsToLoadHere(SlowToLoad):
    def __init__(self):
        if not child.IN_CHILD:
            raise ImportError("no such runtime here")


def _children() -> list[int]:
    """The processes whose parent is this one (Linux)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if int(stat.read().rpartition(")")[2].split()[1]) == os.getpid():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def _item(dtype: str = "float32", **config):
    return build_item(dict(_tiny(select_targets("MaxPool-12")[0], dtype), **config), REGISTRY)


def test_closing_a_runner_whose_child_is_still_starting_kills_it():
    backend, runner = started(f"{__name__}:SlowToLoad", 30, None)
    assert (runner.name, runner.version) == (backend.name, backend.version) == ("slow-to-load", "0")
    pid = runner.child.pid
    runner.close()  # not after the minute the child takes to load
    assert runner.child is None and pid not in _children()


def test_a_child_that_dies_while_starting_is_a_crash_while_starting():
    runner = IsolatedBackend(f"{__name__}:ExitsWhileLoading", "exits", "0", 30, None)
    runner.start()
    item = _item()
    with pytest.raises(BackendCrashed, match="exited with status 3 while starting"):
        runner.run(item.model, item.to_model(item.case_inputs(0)))
    assert runner.child is None


def test_a_backend_that_does_not_load_here_leaves_no_child():
    before = set(_children())
    with pytest.raises(ImportError, match="no such runtime here"):
        started(f"{__name__}:FailsToLoadHere", 30, None)
    assert set(_children()) <= before


@pytest.mark.parametrize("config", [
    # NCHWc: float32, 4-D, channels a multiple of 8 (the layout transformer's kernels)
    dict(shape=[1, 16, 9, 11], dtype="float32", attributes={"kernel_shape": [3, 3], "strides": [2, 2]}, outputs=["Y"]),
    dict(shape=[2, 5, 33, 40], dtype="int8", attributes={"kernel_shape": [2, 3], "strides": [2, 1]},
         outputs=["Y", "Indices"]),
], ids=["nchwc", "int8-indices"])
def test_ort_in_its_child_answers_as_in_this_process(config):
    """Bit for bit, on the kernels that split their work over the pool's threads."""
    pytest.importorskip("onnxruntime")
    item = _item(**config)
    inputs = item.to_model(item.case_inputs(0))
    backend, runner = started("ort", 30, None)
    try:
        isolated = list(runner.run(item.model, inputs))
    finally:
        runner.close()
    own = list(backend.run(item.model, inputs))
    assert len(isolated) == len(own) == len(config["outputs"])
    for got, expected in zip(isolated, own):
        assert got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected)

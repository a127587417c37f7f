"""The fuzz's own isolated runner judges every answer as the suite's runner does, and ONNX
Runtime, alone in the fuzz's child, answers as in the suite's."""

from __future__ import annotations

import time

import numpy as np
import pytest

from conformance.backends.isolated import IsolatedBackend
from conformance.fuzz.cases import build_item
from conformance.fuzz.engine import _tiny
from conformance.fuzz.runner import FuzzRunner, start
from conformance.fuzz.space import select_targets
from conformance.judge.verdict import evaluate
from tests.test_mutants import REGISTRY

# One backend per way an answer can come back: outputs right or wrong, an exception (of any
# kind, with a message that cannot be printed or is huge), garbage, a refusal, a crash.
ANSWERS = ["Raises", "RaisesKeyboardInterrupt", "RaisesSystemExit", "RaisesAnExceptionWhoseStrRaises",
           "RaisesAHugeMessage", "ReturnsAString", "ReturnsNone", "ReturnsTooMany", "ReturnsAnObjectArray",
           "ReturnsAHugeArray", "ReturnsTheWrongShape", "Segfaults", "WrongAtVersion12"]


def _fuzz_s(spec: str):
    return start(spec, 30, None)[1]


def _suite_s(spec: str):
    return IsolatedBackend(spec, "?", "?", 30, None)


def _verdict(runner_of, spec: str, config: dict):
    runner = runner_of(spec)
    try:
        return evaluate(build_item(config, REGISTRY), runner, 0, REGISTRY)
    finally:
        runner.close()


@pytest.mark.parametrize("faulty", ANSWERS)
def test_every_answer_gets_the_verdict_the_suite_s_runner_gives(faulty):
    config = _tiny(select_targets("MaxPool-12")[0], "float32")
    spec = f"tests.faulty_backends:{faulty}"
    fuzzed, suite = (_verdict(runner, spec, config) for runner in (_fuzz_s, _suite_s))
    assert (fuzzed.outcome, fuzzed.message) == (suite.outcome, suite.message)


def test_a_refusal_of_the_runtime_is_the_same_refusal():
    config = _tiny(select_targets("MaxUnpool-11")[0], "float64")  # no double MaxUnpool kernel in ORT
    fuzzed, suite = (_verdict(runner, "ort", config) for runner in (_fuzz_s, _suite_s))
    assert (fuzzed.outcome.value, fuzzed.message) == (suite.outcome.value, suite.message) and fuzzed.message


@pytest.mark.parametrize("config", [
    # float32 NCHWc (C % 8 == 0) and the generic kernel (int8), each over several planes, with Indices
    dict(shape=[2, 16, 64, 64], dtype="float32", attributes={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
         outputs=["Y"]),
    dict(shape=[2, 5, 33, 40], dtype="int8", attributes={"kernel_shape": [2, 3], "strides": [2, 1]},
         outputs=["Y", "Indices"]),
], ids=["nchwc", "int8-indices"])
def test_ort_alone_in_its_process_answers_as_in_the_suite_s(config):
    pytest.importorskip("onnxruntime")
    config = dict(_tiny(select_targets("MaxPool-12")[0], config["dtype"]), **config)
    fuzzed, suite = (_answers(runner, config) for runner in (_fuzz_s, _suite_s))
    assert len(fuzzed) == len(suite) == len(config["outputs"])
    for got, expected in zip(fuzzed, suite):
        assert got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected)


def _answers(runner_of, config: dict) -> list[np.ndarray]:
    item = build_item(config, REGISTRY)
    runner = runner_of("ort")
    try:
        return list(runner.run(item.model, item.to_model(item.case_inputs(0))))
    finally:
        runner.close()


class SlowToLoad:
    """A backend whose loading takes a minute (a runtime importing on a loaded machine)."""

    name, version = "slow-to-load", "0"

    def __init__(self):
        time.sleep(60)

    def details(self):
        return {}

    def run(self, model, inputs):
        return []


def test_closing_does_not_wait_for_a_child_still_starting():
    runner = FuzzRunner(f"{__name__}:SlowToLoad", 30, None)
    time.sleep(0.5)
    started = time.monotonic()
    runner.close()
    assert time.monotonic() - started < 5

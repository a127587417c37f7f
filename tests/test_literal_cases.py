"""The reference backend and the naive loops both reproduce every literal expectation.

A case tagged with an open question writes the outputs of one reading (``expected_reading``, by
default the registry's reference reading): the reference backend, following that reading, must
reproduce them; the naive loops implement the default readings only.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.judge.compare import same_bits
from conformance.semantics import QUESTIONS, Readings
from reference_backend import ReferenceBackend
from conformance.judge.lock import naive_outputs
from tests.support.bundled import bundled_items


def literal_items():
    return [item for item in bundled_items() if item.expectation == "literal"]


def readings_of(item) -> Readings:
    """The readings the case's outputs follow."""
    case = item.case
    if case.ambiguity is None or case.ambiguity.id not in QUESTIONS:
        return Readings()
    return Readings({case.ambiguity.id: case.expected_reading})


def expected_of(item):
    return {o.name: o.expected for o in item.outputs}


def assert_outputs(item, expected, actual):
    assert len(actual) == len(item.outputs)
    for output, got in zip(item.outputs, actual):
        want = expected[output.name]
        assert got.dtype == want.dtype and got.shape == want.shape, output.name
        assert same_bits(want, got).all(), f"{output.name}: expected {want.tolist()}, got {got.tolist()}"


@pytest.mark.parametrize("item", literal_items(), ids=lambda item: item.id)
def test_the_reference_backend_reproduces_the_literal_case(item):
    inputs = item.to_model(item.case_inputs(0))
    backend = ReferenceBackend.configured(str(readings_of(item)))
    actual = backend.run_model(item.model, [inputs[i.name] for i in item.inputs])
    assert_outputs(item, expected_of(item), actual)


@pytest.mark.parametrize("item", [i for i in literal_items() if readings_of(i) == Readings()], ids=lambda item: item.id)
def test_the_naive_loops_reproduce_the_literal_case(item):
    actual = naive_outputs(item, item.case_inputs(seed=0))  # channels-first inputs, whatever the layout
    assert_outputs(item, expected_of(item), actual)


def test_there_are_literal_cases_for_both_operators():
    ops = {(item.case.domain, item.case.op) for item in literal_items()}
    assert ops == {("ai.onnx", "MaxPool"), ("ai.onnx", "MaxUnpool"), ("com.ms.internal.nhwc", "MaxPool"),
                   ("com.microsoft", "NhwcMaxPool"), ("org.openvinotoolkit", "MaxPool")}
    assert np.sum([item.case.ambiguity is not None for item in literal_items()]) > 0

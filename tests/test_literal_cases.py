"""The reference backend and the naive loops both reproduce every literal expectation.

For a case tagged with an ambiguity, each implementation is held to the output written for the
reading it follows: the case's outputs, or the alternative of that reading.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.cases import bundled_case_dir, case_files, load_case_file, load_registry
from conformance.compare import same_bits
from conformance.expand import expand, stored
from reference_backend import InvalidModel, ReferenceBackend
from tests.naive import naive_activation, naive_max_pool, naive_max_unpool, naive_openvino_max_pool


def literal_items():
    registry = load_registry(bundled_case_dir())
    return [item for file in case_files(bundled_case_dir()) for case in load_case_file(file, registry)
            for item in expand(case) if item.expectation == "literal"]


def expected_for(item, reading):
    """The outputs a backend following ``reading`` must produce; None where that reading refuses
    the model (no outputs are written for it)."""
    case = item.case
    if case.ambiguity is None or reading == case.expected_reading:
        return {o.name: o.expected for o in item.outputs}
    if reading not in case.alternatives:
        return None
    alternative = case.alternatives[reading]
    return {o.name: o.dtype.cast(alternative[o.name]["data"]) if o.positions_of else
            stored(o.dtype.cast(alternative[o.name]["data"]), item.layout) for o in item.outputs}


def reference_reading(item):
    return item.case.ambiguity.reference if item.case.ambiguity else None


def assert_outputs(item, expected, actual):
    assert len(actual) == len(item.outputs)
    for output, got in zip(item.outputs, actual):
        want = expected[output.name]
        assert got.dtype == want.dtype and got.shape == want.shape, output.name
        assert same_bits(want, got).all(), f"{output.name}: expected {want.tolist()}, got {got.tolist()}"


@pytest.mark.parametrize("item", literal_items(), ids=lambda item: item.id)
def test_the_reference_backend_reproduces_the_literal_case(item):
    inputs = item.make_inputs(seed=0)
    expected = expected_for(item, reference_reading(item))
    if expected is None:
        with pytest.raises(InvalidModel):
            ReferenceBackend.run_model(item.model, [inputs[i.name] for i in item.inputs])
        return
    actual = ReferenceBackend.run_model(item.model, [inputs[i.name] for i in item.inputs])
    assert_outputs(item, expected, actual)


# The naive loops compute; refusing invalid models is the reference's validation, checked above.
@pytest.mark.parametrize("item", [i for i in literal_items() if expected_for(i, reference_reading(i)) is not None],
                         ids=lambda item: item.id)
def test_the_naive_loops_reproduce_the_literal_case(item):
    reading = reference_reading(item)
    inputs = item.case_inputs(seed=0)  # channels-first, whatever the operator's layout
    attrs = dict(item.case.attributes)
    if item.case.domain == "org.openvinotoolkit":
        actual = list(naive_openvino_max_pool(inputs["X"], **attrs))[: len(item.outputs)]
    elif item.case.op in ("MaxPool", "NhwcMaxPool"):
        activation = attrs.pop("activation", None)
        bounds = attrs.pop("activation_params", None)
        y, indices = naive_max_pool(inputs["X"], **attrs)
        if activation:
            y = naive_activation(y, *bounds)
        actual = [stored(y, item.layout), indices][: len(item.outputs)]
    else:
        output_shape = inputs.get("output_shape")
        actual = [naive_max_unpool(inputs["X"], inputs["I"], output_shape=None if output_shape is None
                                   else [int(d) for d in output_shape], **attrs)]
    assert_outputs(item, expected_for(item, reading), actual)


def test_there_are_literal_cases_for_both_operators():
    ops = {(item.case.domain, item.case.op) for item in literal_items()}
    assert ops == {("ai.onnx", "MaxPool"), ("ai.onnx", "MaxUnpool"), ("com.ms.internal.nhwc", "MaxPool"),
                   ("com.microsoft", "NhwcMaxPool"), ("org.openvinotoolkit", "MaxPool")}
    assert np.sum([item.case.ambiguity is not None for item in literal_items()]) > 0

"""Must-reject items whose models declare their inputs' sizes only as symbols: a runtime whose checks
live in its load-time shape inference alone runs them, and only these items catch it. (A shape
itself is never left out: onnx.checker refuses a graph input without one, which would make the
item invalid for a second reason.)"""

from __future__ import annotations

import pytest

from conformance.backends import load_backend
from conformance.judge.verdict import evaluate
from conformance.outcomes import Outcome
from tests.support.bundled import bundled_items, bundled_registry


@pytest.fixture(scope="module")
def items():
    return bundled_items()


def undeclared(item) -> bool:
    return item.case.input_shapes != "declared"


def test_the_models_declare_symbolic_sizes_and_are_otherwise_valid(items):
    import onnx

    found = [i for i in items if undeclared(i)]
    assert found and {i.case.input_shapes for i in found} == {"symbolic"}
    for item in found:
        for port in item.model.graph.input:
            shape = port.type.tensor_type.shape
            assert shape.dim and all(d.dim_param and not d.HasField("dim_value") for d in shape.dim), item.id
    twin = next(i for i in items if undeclared(i) and i.case.domain == "ai.onnx")
    from conformance.judge.control import twin_of

    valid = twin_of(twin, 0)
    assert valid is not None and valid.case.input_shapes == "symbolic"
    onnx.checker.check_model(valid.model, full_check=True)  # the twin: the same declarations, valid


def test_only_these_items_catch_a_runtime_that_checks_only_declared_shapes(items):
    backend = load_backend("tests.meta.support.faulty_backends:ChecksOnlyDeclaredShapes")
    registry = bundled_registry()
    rejects = [i for i in items if i.case.reject]
    caught = {i.id for i in rejects if evaluate(i, backend, 0, registry).outcome is Outcome.FAIL}
    assert caught and all(undeclared(i) for i in rejects if i.id in caught)
    assert not [i.id for i in rejects if undeclared(i) and i.id not in caught and i.case.ambiguity is None
                and evaluate(i, load_backend("reference"), 0, registry).outcome is Outcome.PASS
                and i.case.domain == "ai.onnx"]

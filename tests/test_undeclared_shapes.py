"""Must-reject items whose models declare no input shape, or only symbolic sizes: a runtime whose
checks live in its load-time shape inference alone runs them, and only these items catch it."""

from __future__ import annotations

import pytest

from conformance.backends import load_backend
from conformance.judge.verdict import evaluate
from conformance.outcomes import Outcome
from tests.bundled import bundled_items, bundled_registry


@pytest.fixture(scope="module")
def items():
    return bundled_items()


def undeclared(item) -> bool:
    return item.case.input_shapes != "declared"


def test_the_models_declare_no_shape_or_symbolic_sizes(items):
    found = [i for i in items if undeclared(i)]
    assert {i.case.input_shapes for i in found} == {"absent", "symbolic"}
    for item in found:
        for port in item.model.graph.input:
            shape = port.type.tensor_type
            if item.case.input_shapes == "absent":
                assert not shape.HasField("shape"), item.id
            else:
                assert shape.shape.dim and all(d.dim_param and not d.HasField("dim_value") for d in shape.shape.dim)


def test_only_these_items_catch_a_runtime_that_checks_only_declared_shapes(items):
    backend = load_backend("tests.faulty_backends:ChecksOnlyDeclaredShapes")
    registry = bundled_registry()
    rejects = [i for i in items if i.case.reject]
    caught = {i.id for i in rejects if evaluate(i, backend, 0, registry).outcome is Outcome.FAIL}
    assert caught and all(undeclared(i) for i in rejects if i.id in caught)
    assert not [i.id for i in rejects if undeclared(i) and i.id not in caught and i.case.ambiguity is None
                and evaluate(i, load_backend("reference"), 0, registry).outcome is Outcome.PASS
                and i.case.domain == "ai.onnx"]

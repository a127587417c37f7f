"""The signatures transcribed from the documents agree with onnx's own schemas."""

from __future__ import annotations

import pytest
from onnx import TensorProto, defs

from conformance.operators import operators
from reference_backend.signatures import SIGNATURES

KIND = {defs.OpSchema.AttrType.INT: "int", defs.OpSchema.AttrType.INTS: "ints",
        defs.OpSchema.AttrType.STRING: "string", defs.OpSchema.AttrType.FLOAT: "float",
        defs.OpSchema.AttrType.FLOATS: "floats", defs.OpSchema.AttrType.STRINGS: "strings"}
ONNX_TYPE = {"tensor(float16)": "float16", "tensor(float)": "float32", "tensor(double)": "float64",
             "tensor(bfloat16)": "bfloat16", "tensor(int8)": "int8", "tensor(uint8)": "uint8",
             "tensor(int64)": "int64", "tensor(int32)": "int32"}
TENSOR_TYPE = {TensorProto.FLOAT16: "float16", TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64",
               TensorProto.BFLOAT16: "bfloat16", TensorProto.INT8: "int8", TensorProto.UINT8: "uint8"}
OPTIONAL = defs.OpSchema.FormalParameterOption.Optional


def onnx_versions(op):
    return sorted({s.since_version for s in defs.get_all_schemas_with_history() if s.name == op and s.domain == ""})


@pytest.mark.parametrize("op", ["MaxPool", "MaxUnpool"])
def test_the_suite_covers_every_version_onnx_defines(op):
    assert sorted(operators()["ai.onnx", op].versions) == onnx_versions(op)
    assert sorted(SIGNATURES[op]) == onnx_versions(op)


def schema_cases():
    return [(op, v) for op in ("MaxPool", "MaxUnpool") for v in onnx_versions(op)]


@pytest.mark.parametrize("op, version", schema_cases())
def test_the_suites_signature_matches_onnx(op, version):
    schema = defs.get_schema(op, version, "")
    ours = operators()["ai.onnx", op].versions[version]
    assert ours.attributes == {name: KIND[a.type] for name, a in schema.attributes.items()}
    assert set(ours.required) == {name for name, a in schema.attributes.items() if a.required}
    for mine, theirs in [(ours.inputs, schema.inputs), (ours.outputs, schema.outputs)]:
        assert [(p.name, p.type, p.optional) for p in mine] == [
            (p.name, p.type_str, p.option == OPTIONAL) for p in theirs
        ]
    assert {k: sorted(v) for k, v in ours.types.items()} == {
        c.type_param_str: sorted(ONNX_TYPE[t] for t in c.allowed_type_strs) for c in schema.type_constraints
    }


@pytest.mark.parametrize("op, version", schema_cases())
def test_the_reference_backends_signature_matches_onnx(op, version):
    schema = defs.get_schema(op, version, "")
    ours = SIGNATURES[op][version]
    assert ours.attributes == {name: int(a.type) for name, a in schema.attributes.items()}
    first = next(c for c in schema.type_constraints if c.type_param_str == schema.inputs[0].type_str)
    assert sorted(TENSOR_TYPE[t] for t in ours.types) == sorted(ONNX_TYPE[t] for t in first.allowed_type_strs)
    required_inputs = sum(p.option != OPTIONAL for p in schema.inputs)
    assert ours.inputs == (required_inputs, len(schema.inputs))
    required_outputs = sum(p.option != OPTIONAL for p in schema.outputs)
    assert ours.outputs == (required_outputs, len(schema.outputs))


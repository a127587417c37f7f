"""The signatures transcribed from the documents agree with onnx's own schemas, and those of
ONNX Runtime's own operators with the schemas onnxruntime registers."""

from __future__ import annotations

import pytest
from onnx import TensorProto, defs

from conformance.load.operators import operators
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
    assert sorted(SIGNATURES["ai.onnx", op]) == onnx_versions(op)


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
    ours = SIGNATURES["ai.onnx", op][version]
    assert ours.attributes == {name: int(a.type) for name, a in schema.attributes.items()}
    first = next(c for c in schema.type_constraints if c.type_param_str == schema.inputs[0].type_str)
    assert sorted(TENSOR_TYPE[t] for t in ours.types) == sorted(ONNX_TYPE[t] for t in first.allowed_type_strs)
    required_inputs = sum(p.option != OPTIONAL for p in schema.inputs)
    assert ours.inputs == (required_inputs, len(schema.inputs))
    required_outputs = sum(p.option != OPTIONAL for p in schema.outputs)
    assert ours.outputs == (required_outputs, len(schema.outputs))


def ort_schemas():
    onnxruntime = pytest.importorskip("onnxruntime")
    schemas = onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()
    return {(s.domain, s.name, s.since_version): s for s in schemas}


ORT_OPERATORS = [(domain, op) for domain, op in operators() if domain.startswith("com.m")]  # ONNX Runtime's own


@pytest.mark.parametrize("domain, op", ORT_OPERATORS)
def test_onnxruntime_registers_the_versions_of_its_own_operators(domain, op):
    registered = sorted(v for d, o, v in ort_schemas() if (d, o) == (domain, op))
    assert sorted(operators()[domain, op].versions) == registered
    assert sorted(SIGNATURES[domain, op]) == registered


@pytest.mark.parametrize("domain, op, version", [(d, o, v) for d, o in ORT_OPERATORS for v in operators()[d, o].versions])
def test_the_signatures_of_onnxruntime_operators_match_its_schemas(domain, op, version):
    schema = ort_schemas()[domain, op, version]
    ours = operators()[domain, op].versions[version]
    assert ours.attributes == {name: KIND[defs.OpSchema.AttrType(int(a.type))] for name, a in schema.attributes.items()}
    assert set(ours.required) == {name for name, a in schema.attributes.items() if a.required}
    # Port names aside (NhwcMaxPool's x and y are X and Y here, as in MaxPool), the ports agree.
    for mine, theirs in [(ours.inputs, schema.inputs), (ours.outputs, schema.outputs)]:
        assert [(p.type, p.optional) for p in mine] == [(p.typeStr, "Optional" in str(p.option)) for p in theirs]
    assert {k: sorted(v) for k, v in ours.types.items()} == {
        c.type_param_str: sorted(ONNX_TYPE[t] for t in c.allowed_type_strs) for c in schema.type_constraints
    }
    reference = SIGNATURES[domain, op][version]
    assert reference.attributes == {name: int(a.type) for name, a in schema.attributes.items()}
    assert sorted(TENSOR_TYPE[t] for t in reference.types) == sorted(ONNX_TYPE[t] for t in schema.type_constraints[0].allowed_type_strs)


@pytest.mark.parametrize("version", [1, 8])
def test_openvino_s_max_pool_has_the_attributes_the_suite_names(version):
    """OpenVINO's own operator, built by its Python API, has exactly the suite's attribute names."""
    openvino = pytest.importorskip("openvino")
    opset = openvino.opset8 if version == 8 else openvino.opset1
    data = opset.parameter([1, 1, 3], openvino.Type.f32)
    extra = {"dilations": [1]} if version == 8 else {}
    node = opset.max_pool(data, strides=[1], pads_begin=[0], pads_end=[0], kernel_shape=[2], **extra)
    assert set(node.get_attributes()) == set(operators()["org.openvinotoolkit", "MaxPool"].versions[version].attributes)
    assert set(node.get_attributes()) == set(SIGNATURES["org.openvinotoolkit", "MaxPool"][version].attributes)

"""Expansion: a case becomes one model per version where it is legal, and nowhere else."""

from __future__ import annotations

import textwrap
from collections import defaultdict

import numpy as np
import onnx
import pytest
from onnx import helper

from conformance.expand.items import expand
from conformance.load.cases import bundled_case_dir, load_case_file, load_registry
from tests.support.bundled import bundled_items


def versions_by_case():
    found = defaultdict(set)
    for item in bundled_items():
        found[item.case.op, item.case.name].add(item.version)
    return found


def expand_text(tmp_path, text):
    path = tmp_path / "cases.yaml"
    path.write_text(textwrap.dedent(text))
    (case,) = load_case_file(path, load_registry(bundled_case_dir()))
    return expand(case)


@pytest.mark.parametrize("op, name, versions", [
    ("MaxPool", "2d_precomputed_pads", {1, 8, 10, 11, 12, 22}),  # float32, pads: everywhere
    ("MaxPool", "with_argmax_2d_precomputed_pads", {8, 10, 11, 12, 22}),  # Indices since 8
    ("MaxPool", "with_argmax_2d_precomputed_strides", {8, 10, 11, 12, 22}),  # storage_order since 8
    ("MaxPool", "2d_ceil", {10, 11, 12, 22}),  # ceil_mode since 10
    ("MaxPool", "2d_dilations", {10, 11, 12, 22}),  # dilations since 10
    ("MaxPool", "2d_uint8", {12, 22}),  # uint8 since 12
    ("MaxUnpool", "with_output_shape", {9, 11, 22}),
])
def test_a_case_applies_exactly_where_its_version_allows(op, name, versions):
    assert versions_by_case()[op, name] == versions


def test_dtypes_all_follows_each_versions_type_list(tmp_path):
    items = expand_text(tmp_path, """\
        op: MaxPool
        cases:
          - name: every_type
            description: d
            provenance: {document: test, example: e}
            dtypes: all
            attributes: {kernel_shape: [2]}
            inputs:
              X: {random: {shape: [1, 1, 4], distribution: permutation}}
            outputs:
              Y: derived
        """)
    by_version = defaultdict(set)
    for item in items:
        by_version[item.version].add(item.dtype)
    floats = {"float16", "float32", "float64"}
    assert by_version == {1: floats, 8: floats, 10: floats, 11: floats,
                          12: floats | {"int8", "uint8"}, 22: floats | {"int8", "uint8", "bfloat16"}}
    assert "MaxPool-22/every_type[bfloat16]" in {item.id for item in items}


def test_a_must_reject_case_expands_at_the_versions_it_names_even_where_illegal(tmp_path):
    items = expand_text(tmp_path, """\
        op: MaxPool
        cases:
          - name: ceil_mode_before_10
            description: ceil_mode does not exist before MaxPool-10
            provenance: {document: test, example: e}
            versions: [1, 8]
            attributes: {kernel_shape: [2], ceil_mode: 1}
            inputs:
              X: {dtype: float32, data: [[[1, 2, 3]]]}
            reject: MaxPool-1 and MaxPool-8 have no attribute ceil_mode
        """)
    assert [item.id for item in items] == ["MaxPool-1/ceil_mode_before_10[float32]",
                                           "MaxPool-8/ceil_mode_before_10[float32]"]
    assert all(item.expectation == "reject" for item in items)
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(items[0].model, full_check=True)


def test_a_must_reject_item_says_where_it_lies_outside_its_version_s_signature():
    """Names and types a version lacks, a required attribute missing, an attribute of the wrong kind:
    what a schema check refuses. A rule on values (pads from 0, a known attribute's value) is none."""
    breaches = {item.id: item.breach for item in bundled_items() if item.case.reject}
    assert breaches["MaxPool-8/ceil_mode_before_10[float32]"] == "MaxPool-8 has no attribute ceil_mode"
    assert breaches["MaxPool-12/integer_types_never[int32]"] == "MaxPool-12 does not accept int32 for T"
    assert breaches["MaxUnpool-11/output_shape_not_int64[float32]"] == "MaxUnpool-11 does not accept float32 for T2"
    assert breaches["MaxPool-12/missing_kernel_shape[float32]"] == "MaxPool-12 requires attribute kernel_shape"
    assert breaches["MaxPool-12/kernel_shape_of_the_wrong_type/float[float32]"] == (
        "MaxPool-12's kernel_shape is ints, not float")
    assert breaches["MaxPool-1/indices_at_1[float32]"] == "MaxPool-1 has no output Indices"
    for value_rule in ("MaxPool-12/negative_pads[float32]", "MaxPool-12/storage_order_out_of_range[float32]",
                       "org.openvinotoolkit.MaxPool-8/unknown_index_element_type[float32]"):
        assert breaches[value_rule] is None
    assert all(item.breach is None for item in bundled_items() if not item.case.reject)


def test_every_bundled_model_passes_the_checker_with_its_minimal_ir_version():
    items = bundled_items()
    assert len(items) > 90
    for item in items:
        model = item.model  # runs onnx.checker with full_check
        (opset,) = model.opset_import
        domain = "" if item.case.domain == "ai.onnx" else item.case.domain
        assert (opset.domain, opset.version) == (domain, item.version)
        # ONNX Runtime's domains take the IR version of the ai.onnx opset of the same number.
        assert model.ir_version == helper.find_min_ir_version_for([helper.make_opsetid("", item.version)])
        assert model.ir_version < 14, "ONNX Runtime 1.31 refuses IR 14"
        assert [n.op_type for n in model.graph.node] == (
            [item.case.upstream.op] if item.case.upstream else []) + [item.case.op]


def test_minimal_ir_versions_of_the_covered_opsets():
    ir = {v: helper.find_min_ir_version_for([helper.make_opsetid("", v)]) for v in (1, 8, 9, 10, 11, 12, 22)}
    assert ir == {1: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 22: 10}


def test_ids_name_op_version_case_and_type():
    ids = {item.id for item in bundled_items()}
    assert "MaxPool-12/2d_ceil[float32]" in ids
    assert "MaxUnpool-9/without_output_shape[float32]" in ids


def test_random_inputs_depend_on_the_seed_but_not_on_the_version():
    items = [i for i in bundled_items() if i.case.name == "2d_default" and i.case.domain == "ai.onnx"]
    assert len({i.version for i in items}) >= 5  # the comparison below spans versions
    first = items[0].case_inputs(seed=0)["X"]
    assert all(np.array_equal(i.case_inputs(seed=0)["X"], first) for i in items[1:])
    assert not np.array_equal(items[0].case_inputs(seed=1)["X"], first)
    assert first.dtype == np.float32 and first.shape == (1, 3, 32, 32)


def test_the_unused_optional_input_is_left_out_of_the_node():
    item = next(i for i in bundled_items() if i.case.name == "without_output_shape")
    (node,) = item.model.graph.node
    assert list(node.input) == ["X", "I"]


def test_a_channels_last_operator_gets_its_inputs_and_outputs_transposed_but_not_its_indices():
    by_id = {item.id: item for item in bundled_items()}
    nchw = by_id["MaxPool-12/with_argmax_2d_precomputed_strides[float32]"]
    nhwc = by_id["com.ms.internal.nhwc.MaxPool-12/with_argmax_2d_precomputed_strides[float32]"]
    assert nhwc.case.derived_from == "maxpool.yaml:57" and nhwc.case.provenance["document"] == "000_2109ee78b005a1e1.txt"
    assert nhwc.inputs[0].shape == (1, 5, 5, 1) and nhwc.model.graph.input[0].type.tensor_type.shape.dim[3].dim_value == 1
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(1, 2, 3, 4)
    assert np.array_equal(nhwc.to_model({"X": x})["X"], np.moveaxis(x, 1, -1))
    y, indices = (o.expected for o in nhwc.outputs)
    assert np.array_equal(y, np.moveaxis(nchw.outputs[0].expected, 1, -1))
    assert np.array_equal(indices, nchw.outputs[1].expected)  # ai.onnx's, unchanged (nhwc-indices)
    assert np.array_equal(nhwc.to_model(nhwc.case_inputs(0))["X"], np.moveaxis(nchw.case_inputs(0)["X"], 1, -1))


def test_a_derived_case_applies_only_where_its_operator_can_take_it():
    derived = [i for i in bundled_items() if i.case.domain == "com.microsoft"]
    assert derived and all(i.dtype in ("int8", "uint8") for i in derived if not i.case.reject)
    assert not any(len(i.outputs) > 1 or "storage_order" in i.case.attributes for i in derived if not i.case.reject)

"""The reference backend agrees bit for bit with the naive loops on randomized parameters."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from unittest import mock

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from onnx import helper

from reference_backend import ReferenceBackend, maxpool
from tests.support.tiers import drawn, split_examples
from reference_backend.signatures import ELEMENT_TYPES
from reference_backend.naive import NaiveError, naive_activation, naive_max_pool, naive_max_unpool, naive_openvino_max_pool

DTYPES = {
    "float16": (np.float16, 22),
    "float32": (np.float32, 1),
    "float64": (np.float64, 1),
    "bfloat16": (ml_dtypes.bfloat16, 22),
    "int8": (np.int8, 12),
    "uint8": (np.uint8, 12),
}
SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0]  # two NaNs: the first one's bits must win


def single_node_model(op, opset, inputs, outputs, domain="", **attrs):
    node = helper.make_node(op, [name for name, _ in inputs], [name for name, _ in outputs], domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, t, None) for n, t in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
    )
    imports = [helper.make_opsetid(domain, opset)]
    return helper.make_model(graph, opset_imports=imports,
                             ir_version=helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))


@st.composite
def pool_problems(draw):
    rank = draw(st.integers(1, 3))
    kernel = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    strides = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    dilations = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    auto_pad = draw(st.sampled_from(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"]))
    pads = draw(st.lists(st.integers(0, 4), min_size=2 * rank, max_size=2 * rank))
    ceil_mode = draw(st.integers(0, 1))
    storage_order = draw(st.integers(0, 1))
    spatial = draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank))
    shape = [draw(st.integers(0, 2)), draw(st.integers(1, 3))] + spatial
    dtype_name = draw(st.sampled_from(sorted(DTYPES)))
    dtype, min_opset = DTYPES[dtype_name]
    size = int(np.prod(shape))
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        # a narrow range makes ties common; the extremes make padding look like data
        values = draw(st.lists(st.sampled_from([info.min, info.min + 1, 0, 1, info.max]), min_size=size, max_size=size))
    else:
        values = draw(st.lists(st.one_of(st.sampled_from(SPECIALS), st.integers(-3, 3).map(float),
                                          st.floats(-1e3, 1e3, width=16)), min_size=size, max_size=size))
    x = np.array(values, dtype=np.float64).astype(dtype).reshape(shape)
    attrs = {"kernel_shape": kernel, "strides": strides, "auto_pad": auto_pad, "storage_order": storage_order}
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    opset = max(min_opset, 8)
    if draw(st.booleans()) or ceil_mode or any(d != 1 for d in dilations):
        attrs.update(ceil_mode=ceil_mode, dilations=dilations)
        opset = max(opset, 10)
    # Without Indices the reference takes its values-only path; tiny blocks split the planes
    # across its threads.
    return x, attrs, draw(st.sampled_from([v for v in (8, 10, 11, 12, 22) if v >= opset])), \
        draw(st.booleans()), draw(st.sampled_from([maxpool.BLOCK_ELEMENTS, 1, 7]))


def bits(a):
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


@split_examples(1000)
def test_max_pool_matches_the_naive_loops(examples):
    drawn(examples, pool_problems())(max_pool_matches_the_naive_loops)


def max_pool_matches_the_naive_loops(problem):
    x, attrs, opset, with_indices, block_elements = problem
    try:
        want_y, want_i = naive_max_pool(x, **attrs)
    except NaiveError:
        assume(False)
    elem = ELEMENT_TYPES[x.dtype]
    outputs = [("Y", elem), ("I", onnx.TensorProto.INT64)][: 2 if with_indices else 1]
    model = single_node_model("MaxPool", opset, [("X", elem)], outputs, **attrs)
    with mock.patch.object(maxpool, "BLOCK_ELEMENTS", block_elements):
        got = ReferenceBackend.run_model(model, [x])
    assert got[0].dtype == x.dtype and got[0].shape == want_y.shape
    np.testing.assert_array_equal(bits(got[0]), bits(want_y))
    if with_indices:
        np.testing.assert_array_equal(got[1], want_i)


@split_examples(400)
def test_the_nhwc_max_pool_matches_the_naive_loops_on_transposed_tensors(examples):
    """com.ms.internal.nhwc MaxPool: X and Y channels-last, Indices as ai.onnx's, Y clamped."""
    drawn(examples, pool_problems(), ACTIVATIONS)(nhwc_max_pool_matches_the_naive_loops)


def nhwc_max_pool_matches_the_naive_loops(problem, activation):
    x, attrs, opset, with_indices, block_elements = problem
    assume(opset <= 12 and x.dtype != ml_dtypes.bfloat16)
    try:
        want_y, want_i = naive_max_pool(x, **attrs)
    except NaiveError:
        assume(False)
    if activation:
        name, low, high = activation
        attrs = dict(attrs, activation=name, activation_params=[low, high])
        want_y = naive_activation(want_y, low, high)
    elem = ELEMENT_TYPES[x.dtype]
    outputs = [("Y", elem), ("I", onnx.TensorProto.INT64)][: 2 if with_indices else 1]
    model = single_node_model("MaxPool", opset, [("X", elem)], outputs, domain="com.ms.internal.nhwc", **attrs)
    with mock.patch.object(maxpool, "BLOCK_ELEMENTS", block_elements):
        got = ReferenceBackend.run_model(model, [np.ascontiguousarray(np.moveaxis(x, 1, -1))])
    np.testing.assert_array_equal(bits(got[0]), bits(np.moveaxis(want_y, 1, -1)))
    if with_indices:
        np.testing.assert_array_equal(got[1], want_i)


ACTIVATIONS = st.sampled_from([None, ("Relu", 0.0, np.inf), ("Clip", -2.0, 1.5), ("Clip", 0.25, 0.25)])


@st.composite
def openvino_problems(draw):
    rank = draw(st.integers(1, 3))
    kernel = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    dilations = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    strides = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    pads_begin = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    pads_end = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    auto_pad = draw(st.sampled_from(["explicit", "explicit", "valid", "same_upper", "same_lower"]))
    rounding_type = draw(st.sampled_from(["floor", "ceil"]))
    spatial = draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank))
    for i in range(rank):  # OpenVINO refuses a kernel longer than the padded axis
        padded = spatial[i] + (pads_begin[i] + pads_end[i] if auto_pad == "explicit" else 0)
        assume(auto_pad.startswith("same") or padded >= (kernel[i] - 1) * dilations[i] + 1)
    shape = [draw(st.integers(1, 2)), draw(st.integers(1, 3))] + spatial
    dtype = draw(st.sampled_from([np.float32, np.float16, np.int8, np.uint8, np.int32, np.int64]))
    size = int(np.prod(shape))
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        values = draw(st.lists(st.sampled_from([int(info.min), int(info.min) + 1, 0, 1, int(info.max)]),
                               min_size=size, max_size=size))
        x = np.array(values, dtype=dtype).reshape(shape)
    else:
        values = draw(st.lists(st.one_of(st.sampled_from(SPECIALS), st.integers(-3, 3).map(float)),
                               min_size=size, max_size=size))
        x = np.array(values, dtype=np.float64).astype(dtype).reshape(shape)
    attrs = {"kernel": kernel, "strides": strides, "pads_begin": pads_begin, "pads_end": pads_end,
             "auto_pad": auto_pad, "rounding_type": rounding_type}
    version = draw(st.sampled_from([1, 8]))
    if version == 8:
        attrs.update(dilations=dilations, axis=draw(st.integers(-len(shape), len(shape) - 1)),
                     index_element_type=draw(st.sampled_from(["i32", "i64"])))
    return x, attrs, version


@split_examples(500)
def test_openvino_max_pool_matches_the_naive_loops(examples):
    drawn(examples, openvino_problems())(openvino_max_pool_matches_the_naive_loops)


def openvino_max_pool_matches_the_naive_loops(problem):
    x, attrs, version = problem
    want_y, want_i = naive_openvino_max_pool(x, **attrs)
    elem = ELEMENT_TYPES[x.dtype]
    index_type = onnx.TensorProto.INT32 if attrs.get("index_element_type") == "i32" else onnx.TensorProto.INT64
    outputs = [("Y", elem), ("Indices", index_type)][: 2 if version == 8 else 1]
    model = single_node_model("MaxPool", version, [("X", elem)], outputs, domain="org.openvinotoolkit", **attrs)
    got = ReferenceBackend.run_model(model, [x])
    assert got[0].dtype == x.dtype and got[0].shape == want_y.shape
    np.testing.assert_array_equal(bits(got[0]), bits(want_y))
    if version == 8:
        assert got[1].dtype == want_i.dtype
        np.testing.assert_array_equal(got[1], want_i)


@st.composite
def unpool_problems(draw):
    rank = draw(st.integers(1, 3))
    kernel = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    strides = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    pads = draw(st.lists(st.integers(0, 1), min_size=2 * rank, max_size=2 * rank))
    pooled = [draw(st.integers(0, 2)), draw(st.integers(1, 2))] + draw(
        st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    default = pooled[:2] + [(pooled[2 + i] - 1) * strides[i] - pads[i] - pads[i + rank] + kernel[i]
                            for i in range(rank)]
    assume(min(default) >= 0)
    grow = draw(st.lists(st.integers(0, 2), min_size=rank, max_size=rank))
    output_shape = draw(st.one_of(st.none(), st.just(default[:2] + [d + g for d, g in zip(default[2:], grow)])))
    target = int(np.prod(output_shape if output_shape is not None else default))
    assume(target > 0 or np.prod(pooled) == 0)
    size = int(np.prod(pooled))
    x = np.array(draw(st.lists(st.floats(-100, 100, width=32), min_size=size, max_size=size)),
                 dtype=np.float32).reshape(pooled)
    indices = np.array(draw(st.lists(st.integers(0, max(target - 1, 0)), min_size=size, max_size=size)),
                       dtype=np.int64).reshape(pooled)
    return x, indices, {"kernel_shape": kernel, "strides": strides, "pads": pads}, output_shape


@settings(max_examples=200, deadline=None)
@given(unpool_problems(), st.sampled_from([9, 11, 22]))
def test_max_unpool_matches_the_naive_loops(problem, opset):
    x, indices, attrs, output_shape = problem
    want = naive_max_unpool(x, indices, output_shape=output_shape, **attrs)
    inputs = [("X", onnx.TensorProto.FLOAT), ("I", onnx.TensorProto.INT64)]
    feeds = [x, indices]
    if output_shape is not None:
        inputs.append(("output_shape", onnx.TensorProto.INT64))
        feeds.append(np.array(output_shape, dtype=np.int64))
    model = single_node_model("MaxUnpool", opset, inputs, [("Y", onnx.TensorProto.FLOAT)], **attrs)
    (got,) = ReferenceBackend.run_model(model, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_padding_is_never_selected_even_when_it_equals_the_maximum(dtype):
    x = np.full((1, 1, 2, 2), -np.inf, dtype=dtype)
    elem = ELEMENT_TYPES[np.dtype(dtype)]
    model = single_node_model("MaxPool", 22, [("X", elem)], [("Y", elem), ("I", onnx.TensorProto.INT64)],
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    y, i = ReferenceBackend.run_model(model, [x])
    assert np.all(np.isneginf(y.astype(np.float64)))
    assert set(i.ravel()) <= {0, 1, 2, 3}


@pytest.mark.parametrize("question, reading", [("nan-in-window", "nan-ignored"),
                                               ("nan-in-window", "nan-never-selected"),
                                               ("signed-zero-tie", "last-in-window")])
def test_the_scan_for_other_readings_compares_int64_exactly(question, reading):
    """2**62 and 2**62 + 1 are one float64: the scan that serves the other readings kept the
    first of them when it compared in float64. OpenVINO's MaxPool-8 takes int64."""
    from onnx import TensorProto

    from conformance.judge.ambiguities import Readings, reference

    node = helper.make_node("MaxPool", ["X"], ["Y", "I"], domain="org.openvinotoolkit", kernel=[2], strides=[1],
                            pads_begin=[0], pads_end=[0])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.INT64, [1, 1, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.INT64, None),
                               helper.make_tensor_value_info("I", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("org.openvinotoolkit", 8)])
    x = np.array([[[2**62, 2**62 + 1]]], dtype=np.int64)
    y, indices = reference(Readings({question: reading})).run(model, {"X": x})
    assert int(y[0, 0, 0]) == 2**62 + 1 and int(indices[0, 0, 0]) == 1


# The alternative readings the fast path implements for the window scan, each against the
# specification's loops under the same reading.
NAIVE_READINGS = [("nan-in-window", "nan-ignored"), ("nan-in-window", "nan-never-selected"),
                  ("signed-zero-tie", "positive-zero"), ("signed-zero-tie", "last-in-window"),
                  ("ceil-window-starts-in-padding", "formula-as-printed"),
                  ("storage-order-scope", "tensor-column-major")]


@settings(max_examples=150, deadline=None)
@given(pool_problems(), st.sampled_from(NAIVE_READINGS))
def test_max_pool_under_another_reading_matches_the_naive_loops_under_it(problem, question_reading):
    from conformance.semantics import Readings

    x, attrs, opset, with_indices, _ = problem
    readings = Readings(dict([question_reading]))
    try:
        want_y, want_i = naive_max_pool(x, **attrs, readings=readings)
    except NaiveError:
        assume(False)
    elem = ELEMENT_TYPES[x.dtype]
    outputs = [("Y", elem), ("I", onnx.TensorProto.INT64)][: 2 if with_indices else 1]
    model = single_node_model("MaxPool", opset, [("X", elem)], outputs, **attrs)
    try:
        got = ReferenceBackend.configured(str(readings)).run_model(model, [x])
    except Exception:  # noqa: BLE001 - a reading under which the model is invalid has nothing to compare
        assume(False)
    assert got[0].dtype == x.dtype and got[0].shape == want_y.shape
    np.testing.assert_array_equal(bits(got[0]), bits(want_y))
    if with_indices:
        np.testing.assert_array_equal(got[1], want_i)


@pytest.mark.parametrize("reading", ["last-write-wins", "first-write-wins"])
def test_max_unpool_of_repeated_indices_follows_the_reading_as_the_naive_loops_do(reading):
    from conformance.semantics import Readings

    x = np.array([[[[1.0, 2.0, 3.0]]]], dtype=np.float32)
    indices = np.array([[[[1, 1, 0]]]], dtype=np.int64)
    readings = Readings({"maxunpool-duplicate-indices": reading})
    want = naive_max_unpool(x, indices, kernel_shape=[1, 2], output_shape=[1, 1, 1, 2], readings=readings)
    model = single_node_model("MaxUnpool", 11, [("X", onnx.TensorProto.FLOAT), ("I", onnx.TensorProto.INT64),
                                                ("output_shape", onnx.TensorProto.INT64)],
                              [("Y", onnx.TensorProto.FLOAT)], kernel_shape=[1, 2])
    (got,) = ReferenceBackend.configured(str(readings)).run_model(model, [x, indices, np.array([1, 1, 1, 2])])
    np.testing.assert_array_equal(got, want)
    assert want[0, 0, 0, 1] == (2.0 if reading == "last-write-wins" else 1.0)

"""An item runs into an open question exactly where the question's readings answer it differently."""

from __future__ import annotations

import json

import pytest
import yaml

from conformance.expand.items import expand
from conformance.judge.ambiguities import _PREFILTERS, detected
from conformance.load.cases import load_case_file
from tests.support.bundled import bundled_items, bundled_registry

REGISTRY = bundled_registry()


def item(tmp_path, op="MaxPool", version=12, **case):
    case = {"name": "probe", "description": "d", "provenance": {"generated": "a test"}, "versions": [version],
            "outputs": {"Y": "derived"} if op == "MaxPool" else {"output": "derived"}, **case}
    path = tmp_path / "probe.yaml"
    path.write_text(yaml.safe_dump({"op": op, "cases": [case]}))
    (loaded,) = load_case_file(path, REGISTRY)
    (made,) = expand(loaded)
    return made


def pool(tmp_path, shape, data=None, version=12, indices=False, **attributes):
    x = {"dtype": "float32", "data": data} if data is not None else {
        "dtype": "float32", "random": {"shape": shape, "distribution": "permutation"}}
    outputs = {"Y": "derived", "Indices": "derived"} if indices else {"Y": "derived"}
    return item(tmp_path, version=version, attributes=attributes, inputs={"X": x}, outputs=outputs)


def found(made):
    return detected(made, made.case_inputs(0), REGISTRY)


CASES = [
    # (detector, attributes and input of a MaxPool, expected)
    ("ceil-window-starts-in-padding", dict(shape=[1, 1, 2], kernel_shape=[1], strides=[2], ceil_mode=1), True),
    ("ceil-window-starts-in-padding", dict(shape=[1, 1, 4], kernel_shape=[3], strides=[2], ceil_mode=1), False),
    ("ceil-window-starts-in-padding", dict(shape=[1, 1, 2], kernel_shape=[1], strides=[2]), False),
    ("auto-pad-with-ceil-mode", dict(shape=[1, 1, 5], kernel_shape=[2], strides=[2], auto_pad="VALID", ceil_mode=1), True),
    ("auto-pad-with-ceil-mode", dict(shape=[1, 1, 6], kernel_shape=[2], strides=[2], auto_pad="VALID", ceil_mode=1), False),
    ("auto-pad-with-ceil-mode", dict(shape=[1, 1, 5], kernel_shape=[2], strides=[2], auto_pad="SAME_UPPER", ceil_mode=1), False),
    ("same-pad-negative", dict(shape=[1, 1, 7], kernel_shape=[1], strides=[4], auto_pad="SAME_UPPER"), True),
    ("same-pad-negative", dict(shape=[1, 1, 7], kernel_shape=[2], strides=[2], auto_pad="SAME_LOWER"), False),
    ("window-in-padding-only", dict(shape=[1, 1, 2], kernel_shape=[2], pads=[2, 0]), True),
    ("window-in-padding-only", dict(shape=[1, 1, 4], kernel_shape=[2], pads=[0, 2]), True),
    ("window-in-padding-only", dict(shape=[1, 1, 7], kernel_shape=[2], dilations=[3], pads=[2, 2]), False),
    ("pads-with-auto-pad", dict(shape=[1, 1, 4], kernel_shape=[2], auto_pad="SAME_UPPER", pads=[0, 1]), True),
    ("pads-with-auto-pad", dict(shape=[1, 1, 4], kernel_shape=[2], auto_pad="SAME_UPPER"), False),
]


@pytest.mark.parametrize("key, spec, expected", CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_a_geometry_detector_fires_exactly_where_the_readings_differ(tmp_path, key, spec, expected):
    spec = dict(spec)
    assert (key in found(pool(tmp_path, spec.pop("shape"), **spec))) is expected


@pytest.mark.parametrize("shape, indices, expected", [
    ([1, 2, 2, 2], True, True), ([1, 1, 2, 2], True, False), ([1, 2, 2, 2], False, False)])
def test_storage_order_is_open_only_for_indices_over_several_planes(tmp_path, shape, indices, expected):
    made = pool(tmp_path, shape, kernel_shape=[2, 1], storage_order=1, indices=indices)
    assert ("storage-order-scope" in found(made)) is expected


@pytest.mark.parametrize("data, key, expected", [
    ([[[1.0, float("nan")]]], "nan-in-window", True),
    ([[[1.0, float("inf")]]], "nan-in-window", False),
    ([[[-0.0, 0.0]]], "signed-zero-tie", True),
    ([[[-0.0, -1.0]]], "signed-zero-tie", False),
])
def test_value_detectors_look_at_the_input(tmp_path, data, key, expected):
    assert (key in found(pool(tmp_path, None, data=data, kernel_shape=[2]))) is expected


def unpool(tmp_path, x, i, output_shape=None):
    inputs = {"X": {"dtype": "float32", "data": x}, "I": {"dtype": "int64", "data": i}}
    if output_shape:
        inputs["output_shape"] = {"dtype": "int64", "data": output_shape}
    return item(tmp_path, op="MaxUnpool", version=11, attributes={"kernel_shape": [2, 2], "strides": [2, 2]},
                inputs=inputs)


X = [[[[1.0, 2.0], [3.0, 4.0]]]]


@pytest.mark.parametrize("indices, output_shape, expected", [
    ([[[[5, 7], [13, 15]]]], [1, 1, 5, 5], {"maxunpool-output-shape-index-space"}),
    ([[[[5, 7], [13, 15]]]], [1, 1, 5, 4], set()),  # rows only: the readings agree
    ([[[[5, 7], [13, 15]]]], [1, 1, 4, 4], set()),
    ([[[[5, 5], [13, 15]]]], None, {"maxunpool-duplicate-indices"}),
    ([[[[0, 1], [2, 3]]]], [1, 1, 2, 2], {"maxunpool-output-shape-smaller", "maxunpool-output-shape-index-space"}),
    ([[[[0, 1], [2, 3]]]], [1, 1, 3, 4], {"maxunpool-output-shape-smaller"}),  # rows only shrink
    ([[[[5, 7], [13, 15]]]], [2, 1, 4, 4], {"maxunpool-output-shape-batch-channels"}),
])
def test_max_unpool_detectors(tmp_path, indices, output_shape, expected):
    assert set(found(unpool(tmp_path, X, indices, output_shape))) == expected


def test_every_prefilter_names_a_registry_entry():
    assert set(_PREFILTERS) <= set(REGISTRY)


@pytest.mark.slow
def test_every_open_question_is_reached_by_a_bundled_item():
    reached = set()
    for made in bundled_items():
        reached.update(detected(made, made.case_inputs(0), REGISTRY))
    open_ones = {key for key, entry in REGISTRY.items() if entry.status == "open"}
    assert open_ones <= reached, json.dumps(sorted(open_ones - reached))


def openvino_pool(tmp_path, shape, **attributes):
    case = {"name": "probe", "description": "d", "provenance": {"generated": "a test"}, "versions": [8],
            "attributes": {"pads_begin": [0] * (len(shape) - 2), "pads_end": [0] * (len(shape) - 2), **attributes},
            "inputs": {"X": {"dtype": "float32", "random": {"shape": shape, "distribution": "permutation"}}},
            "outputs": {"Y": "derived"}}
    path = tmp_path / "probe.yaml"
    path.write_text(yaml.safe_dump({"op": "MaxPool", "domain": "org.openvinotoolkit", "cases": [case]}))
    (made,) = expand(load_case_file(path, REGISTRY)[0])
    return made


OPENVINO_CASES = [
    # OpenVINO's ceil keeps a window starting in the end padding: it holds no element
    ("openvino-window-without-element", dict(shape=[1, 1, 5], kernel=[2], strides=[2], pads_begin=[1], pads_end=[1],
                                             rounding_type="ceil"), True),
    ("openvino-window-without-element", dict(shape=[1, 1, 6], kernel=[3], strides=[2], pads_begin=[1], pads_end=[1],
                                             rounding_type="ceil"), False),
    ("openvino-window-without-element", dict(shape=[1, 1, 5], kernel=[1], strides=[3], auto_pad="valid",
                                             rounding_type="ceil"), True),
    ("openvino-same-output-size", dict(shape=[1, 1, 6], kernel=[2], strides=[2], auto_pad="same_upper"), True),
    ("openvino-same-output-size", dict(shape=[1, 1, 6], kernel=[2], strides=[1], auto_pad="same_upper"), False),
    # stride 2 beyond the kernel extent 1: ceil rounding adds a window past the input (OpenVINO 2026.4)
    ("openvino-same-output-size", dict(shape=[1, 1, 2], kernel=[1], strides=[2], auto_pad="same_upper",
                                       rounding_type="ceil"), True),
    # ONNX's questions are not OpenVINO's: its ceil rule differs
    ("ceil-window-starts-in-padding", dict(shape=[1, 1, 5], kernel=[2], strides=[2], pads_begin=[1], pads_end=[1],
                                           rounding_type="ceil"), False),
]


@pytest.mark.parametrize("key, spec, expected", OPENVINO_CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(OPENVINO_CASES)])
def test_an_openvino_detector_fires_exactly_where_its_readings_differ(tmp_path, key, spec, expected):
    spec = dict(spec)
    assert (key in found(openvino_pool(tmp_path, spec.pop("shape"), **spec))) is expected

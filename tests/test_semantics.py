"""The readings of the open questions are switches in code (conformance.semantics), equal to the
registry's; each changes what the reference answers for at least one bundled item; and the
outputs worked out by hand for the other readings are what the reference gives under them."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance.expand.items import qualified_op, stored
from conformance.judge.ambiguities import _may_differ, _View, answer
from conformance.judge.compare import same_bits
from conformance.semantics import QUESTIONS, Readings, UnknownReading
from tests.support.bundled import bundled_items, bundled_registry

REGISTRY = bundled_registry()
ITEMS = bundled_items()
BY_ID = {item.id: item for item in ITEMS}


def test_every_registry_entry_is_a_switch_with_the_same_readings_and_default():
    assert set(QUESTIONS) == set(REGISTRY)
    for key, entry in REGISTRY.items():
        assert set(QUESTIONS[key]) == set(entry.interpretations), key
        assert QUESTIONS[key][0] == entry.reference, key


def test_readings_refuse_unknown_questions_and_readings():
    with pytest.raises(UnknownReading):
        Readings({"no-such-question": "x"})
    with pytest.raises(UnknownReading):
        Readings.parse("nan-in-window:nan-sometimes")
    assert str(Readings.parse("nan-in-window:nan-ignored;signed-zero-tie:first-in-window")) == "nan-in-window:nan-ignored"


def _op_version(item) -> str:
    return f"{qualified_op(item.case.domain, item.case.op)}-{item.version}"


@cache
def _default_answer(item_id: str):
    item = BY_ID[item_id]
    return answer(item, item.to_model(item.case_inputs(0)))


def _candidates(key: str):
    """The items at the question's versions (its tagged cases first, then the cheap test's
    picks, then the rest), and the MaxUnpool round trips whose MaxPool runs into it."""
    versions = set(REGISTRY[key].entry["versions"])
    concerned = [i for i in ITEMS if _op_version(i) in versions or i.case.upstream is not None]
    tagged = [i for i in concerned if i.case.ambiguity and i.case.ambiguity.id == key]
    picked = [i for i in concerned if i not in tagged and not i.case.reject and _may_differ(key, _View(i, i.case_inputs(0)))]
    return tagged + picked + [i for i in concerned if i not in tagged and i not in picked]


@pytest.mark.parametrize("key, reading", [(k, r) for k, readings in QUESTIONS.items() for r in readings[1:]],
                         ids=lambda value: value)
@pytest.mark.slow
def test_each_reading_changes_what_the_reference_answers_for_some_item(key, reading):
    for item in _candidates(key):
        other = answer(item, item.to_model(item.case_inputs(0)), Readings({key: reading}))
        if not _default_answer(item.id).same_as(other):
            return
    pytest.fail(f"no bundled item is answered differently under {key}:{reading}")


# (file, case, question, reading, outputs as the case writes them): worked out by hand, from the
# cases' own provenance notes.
HAND_WORKED = [
    ("maxpool_open_questions.yaml", "same_stride_beyond_kernel", "same-pad-negative", "negative-split",
     {"Y": [[[2, 6]]]}),
    ("maxpool_open_questions.yaml", "same_odd_negative_total", "same-pad-negative", "negative-split", {"Y": [[[1, 4]]]}),
    ("maxpool_open_questions.yaml", "same_odd_negative_total", "same-pad-negative", "negative-split-floor",
     {"Y": [[[2, 5]]]}),
    ("maxpool_open_questions.yaml", "same_lower_even_negative_total", "same-pad-negative", "negative-split",
     {"Y": [[[3, 11]]]}),
    ("maxpool_open_questions.yaml", "same_lower_even_negative_total", "same-pad-negative", "negative-split-floor",
     {"Y": [[[3, 11]]]}),
    ("maxpool_open_questions.yaml", "same_lower_even_negative_total", "same-pad-negative",
     "negative-split-lower-plus-one", {"Y": [[[2, 10]]]}),
    ("maxpool_open_questions.yaml", "valid_with_ceil_mode", "auto-pad-with-ceil-mode", "ceil-mode-applies",
     {"Y": [[[2, 4, 5]]]}),
    ("maxpool_open_questions.yaml", "nan_in_a_window", "nan-in-window", "nan-ignored", {"Y": [[[1, 3]]]}),
    ("maxpool_open_questions.yaml", "nan_first_in_a_window", "nan-in-window", "nan-ignored",
     {"Y": [[[np.nan, 3, np.nan]]]}),
    ("maxpool_open_questions.yaml", "nan_first_in_a_window", "nan-in-window", "nan-never-selected",
     {"Y": [[[1, 3, -np.inf]]]}),
    ("maxpool_open_questions.yaml", "signed_zeros_in_a_window", "signed-zero-tie", "positive-zero",
     {"Y": [[[0.0, 0.0]]]}),
    ("maxpool_open_questions.yaml", "signed_zeros_in_a_window", "signed-zero-tie", "last-in-window",
     {"Y": [[[0.0, -0.0]]]}),
    ("maxpool_open_questions.yaml", "column_major_over_two_channels", "storage-order-scope", "tensor-column-major",
     {"Y": [[[[3, 4]], [[8, 7]]]], "Indices": [[[[2, 4]], [[1, 7]]]]}),
    ("maxpool_open_questions.yaml", "pads_beside_auto_pad", "pads-with-auto-pad", "pads-ignored",
     {"Y": [[[2, 3, 4, 4]]]}),
    ("maxpool_open_questions.yaml", "pads_beside_auto_pad", "pads-with-auto-pad", "auto-pad-ignored",
     {"Y": [[[1, 2, 3, 4]]]}),
    ("maxunpool.yaml", "with_output_shape", "maxunpool-output-shape-index-space", "output-index-space",
     {"output": [[[[0, 0, 0, 0, 0], [5, 0, 6, 0, 0], [0, 0, 0, 7, 0], [8, 0, 0, 0, 0], [0, 0, 0, 0, 0]]]]}),
    ("maxunpool_edges.yaml", "duplicate_indices", "maxunpool-duplicate-indices", "first-write-wins",
     {"output": [[[1, 0, 0, 0]]]}),
    ("maxpool_nhwc.yaml", "relu_8_bit", "nhwc-activation-8-bit", "ignored",
     {"Y": [[[[-2, -1], [-2, -4]], [[7, 9], [4, 9]]]]}),
    ("maxpool_nhwc.yaml", "clip_8_bit", "nhwc-activation-8-bit", "ignored",
     {"Y": [[[[5, 6], [8, 9]], [[7, 9], [4, 9]]]]}),
    ("maxpool.yaml", "2d_ceil_output_size_reduce_by_one", "ceil-window-starts-in-padding", "formula-as-printed",
     {"Y": [[[[1, -np.inf], [-np.inf, -np.inf]]]]}),
    ("maxpool_invalid.yaml", "empty_auto_pad_with_pads", "auto-pad-empty-string", "notset", {"Y": [[[1, 3, 4]]]}),
]


@pytest.mark.parametrize("file, case, key, reading, outputs", HAND_WORKED, ids=lambda value: value if isinstance(value, str) else "")
def test_the_reference_under_another_reading_gives_the_hand_worked_outputs(file, case, key, reading, outputs):
    items = [i for i in ITEMS if i.case.file.name == file and i.case.name == case and i.case.domain in
             ("ai.onnx", "com.ms.internal.nhwc")]
    assert items
    for item in items:
        got = answer(item, item.to_model(item.case_inputs(0)), Readings({key: reading}))
        assert got.outputs is not None, got.refusal
        for output, value in zip(item.outputs, got.outputs):
            want = output.dtype.cast(outputs[output.name])
            want = want if output.positions_of else stored(want, item.layout)
            assert value.shape == want.shape and same_bits(want, value).all(), (item.id, value.tolist())


def test_openvino_same_with_ceil_adds_a_window_where_the_stride_exceeds_the_kernel():
    # OpenVINO 2026.4: [1, 2], kernel 1, strides 2, same_upper, ceil -> [1, -3.4e38] (two windows)
    from conformance.semantics import openvino_axes
    (axis,) = openvino_axes([2], [1], [2], [0], [0], None, "same_upper", "ceil",
                            Readings({"openvino-same-output-size": "rounding-after-same-pads"}))
    assert axis.out == 2
    (axis,) = openvino_axes([2], [1], [2], [0], [0], None, "same_upper", "ceil")
    assert axis.out == 1


def _truncating_half(value: int) -> int:
    """C++'s value / 2: rounds towards zero."""
    return -(-value // 2) if value < 0 else value // 2


# How a runtime may write SAME's begin pad from the total, in the languages runtimes are written
# in: (upper, lower). tinygrad 0.14 uses the first, ONNX Runtime and Caffe2 the third.
SAME_SPLITS = {
    "floor division": (lambda t: t // 2, lambda t: t - t // 2),
    "truncating division": (_truncating_half, lambda t: t - _truncating_half(t)),
    "truncating division, lower as (total + 1) / 2": (_truncating_half, lambda t: _truncating_half(t + 1)),
}


@pytest.mark.parametrize("convention", SAME_SPLITS)
def test_every_integer_rounding_of_a_negative_same_total_is_a_reading(convention):
    """A runtime halving a negative SAME total with any convention gives the windows of some
    reading of same-pad-negative (else its answers would be judged 'no reading': a false alarm)."""
    from conformance.semantics import pool_axes
    for size in range(1, 14):
        for stride in range(2, 9):
            for auto_pad, split in zip(("SAME_UPPER", "SAME_LOWER"), SAME_SPLITS[convention]):
                total = (-(-size // stride) - 1) * stride + 1 - size
                if total >= 0:
                    continue
                begin = split(total)
                readings = [r for r in QUESTIONS["same-pad-negative"] if r != "rejected"]
                starts = {r: pool_axes([size], [1], [stride], auto_pad=auto_pad,
                                       readings=Readings({"same-pad-negative": r}))[0].pad_begin for r in readings}
                assert begin in starts.values(), (size, stride, auto_pad, total, begin, starts)


def test_a_negative_same_total_of_minus_one_halved_by_floor_division_starts_the_windows_one_further():
    # length 5, kernel 1, stride 3, SAME_UPPER: total -1; -1 // 2 = -1 -> windows at 1 and 4 -> [2, 5]
    from conformance.semantics import pool_axes
    floor = Readings({"same-pad-negative": "negative-split-floor"})
    (axis,) = pool_axes([5], [1], [3], auto_pad="SAME_UPPER", readings=floor)
    assert (axis.pad_begin, axis.pad_end, axis.out) == (-1, 0, 2)
    assert [axis.positions(o) for o in range(axis.out)] == [[1], [4]]
    (axis,) = pool_axes([5], [1], [3], auto_pad="SAME_UPPER", readings=Readings({"same-pad-negative": "negative-split"}))
    assert [axis.positions(o) for o in range(axis.out)] == [[0], [3]]
    (axis,) = pool_axes([5], [1], [3], auto_pad="SAME_LOWER", readings=floor)
    assert (axis.pad_begin, axis.pad_end) == (0, -1)

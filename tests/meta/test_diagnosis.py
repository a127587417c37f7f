"""Diagnosis (conformance/judge/analysis/diagnosis.py): each defect model, run as a broken backend, is
diagnosed as itself, and its line in the report is its own; nothing is diagnosed on a likeness."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance.judge.analysis.catalogue import BY_NAME, DEFECTS
from conformance.judge.analysis.models.kit import DefectModel, Facts, stacked
from conformance.judge.compare import same_bytes
from conformance.judge.analysis.diagnosis import facts
from conformance.judge.catalogue import entries
from conformance.judge.diagnoses import Diagnosis
from conformance.report.causes import title
from conformance.judge.oracle import consult
from conformance.judge.verdict import Outcome, evaluate
from conformance.load.cases import bundled_case_dir
from conformance.report.causes import failure_clusters
from conformance.report.record import item_record
from tests.support.bundled import bundled_items
from tests.meta.support.faulty_backends import Faulty
from tests.meta.support.mutants import READINGS_ONLY, Mutant
from tests.support.tiers import share_of, split_items
from tests.meta.support.mutant_backend import REGISTRY, MutantBackend, items_round_robin
from tests.support.named import names

PER_MODEL = 60  # items a model can change the answer of, round-robin over the case classes


@cache
def relevant(model: DefectModel) -> list:
    applicable = [i for i in items_round_robin() if not i.case.reject and model.applies(facts(i))]
    if model.needs == "nan":  # it changes windows holding NaN only (of several axes): those first
        applicable.sort(key=lambda i: ("nan" not in i.id, -len(i.inputs[0].shape)))
    return applicable[:PER_MODEL]


def _divergent(backend, items) -> int:
    return sum(evaluate(item, backend, seed=0, registry=REGISTRY).outcome is Outcome.DIVERGENT for item in items)


def _records(backend, items) -> list[dict]:
    found = []
    for item in items:
        verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
        if verdict.outcome is Outcome.FAIL:
            record = item_record(item, bundled_case_dir())
            record.update(backend=backend.name, outcome="fail", message=verdict.message, diagnosis=[d.as_json() for d in verdict.diagnosis])
            found.append(record)
    return found


@cache
def answered_otherwise(model: DefectModel) -> list:
    """The relevant items whose answer the model changes: the only ones it can fail, found for a
    tenth of what judging and diagnosing them costs."""
    backend, changed = MutantBackend(Mutant(model.name, model.title, model.backend)), []
    for item in relevant(model):
        oracle = consult(item, 0, REGISTRY)
        try:
            outputs = backend.run(oracle.model, item.to_model(oracle.written))
        except Exception:  # noqa: BLE001 - a refusal or a crash is an answer changed too
            changed.append(item)
            continue
        expected = [oracle.expected.get(output.name) for output in item.outputs]
        if len(outputs) != len(expected) or not all(_same_answer(o, e) for o, e in zip(outputs, expected)):
            changed.append(item)
    return changed


def _same_answer(output, expected) -> bool:
    return (expected is not None and isinstance(output, np.ndarray) and output.dtype == expected.dtype
            and output.shape == expected.shape and bool(same_bytes(output, expected).all()))


@split_items()
@pytest.mark.parametrize("model", DEFECTS, ids=lambda m: m.name)
def test_a_defect_model_run_as_a_backend_is_diagnosed_as_itself(model, share):
    items = share_of(answered_otherwise(model), share)
    backend = MutantBackend(Mutant(model.name, model.title, model.backend))
    failed = _records(backend, items)
    if share == "fast" and not failed:  # its first quarter only pass or diverge (a tie's Indices): all decide
        if model.name in READINGS_ONLY:
            # NaN from a window's first element only: each element is a reading of nan-in-window, so
            # alone it is divergent; beside another bug it is diagnosed (test_nan_lost_by_comparison_...)
            assert _divergent(backend, answered_otherwise(model)), f"{model.name} changes no answer"
            return
        failed = _records(backend, answered_otherwise(model))
        assert failed, f"{model.name} changes no answer on the {len(relevant(model))} items it applies to"
    if not failed:
        return
    assert all(model.name in names(r["diagnosis"]) for r in failed), [(r["id"], names(r["diagnosis"])) for r in failed][:3]
    lines = failure_clusters(failed)[backend.name]
    if model.composite:  # two bugs in one kernel: the items that show one of them only join its line
        assert model.name in lines[0].signature and all(line.diagnosed for line in lines)
    else:
        assert model.name in lines[0].signature and len(lines[0].records) == len(failed)  # one line, its own


def test_every_model_has_a_title_and_says_where_it_was_seen():
    assert len({m.name for m in DEFECTS}) == len(DEFECTS) >= 40
    assert all(m.title and m.seen for m in DEFECTS)
    pair = Diagnosis.of("padding_is_zero", "indices_per_plane")
    assert title(pair, entries(pair.models)) == (
        "padding takes part in the maximum with the value 0 and Indices omit the N·C plane offset (they count "
        "within each plane, as PyTorch's do)")


class AddsNoise(Faulty):
    """Wrong in a way no defect model is: each value nudged by a fixed odd pattern."""

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        y = outputs[0]
        if np.issubdtype(y.dtype, np.floating) and y.size:
            outputs[0] = (y.astype(np.float64) + np.arange(y.size).reshape(y.shape) % 3 * 0.37 + 0.11).astype(y.dtype)
        return outputs


def test_an_answer_no_model_gives_is_not_diagnosed():
    items = [i for i in items_round_robin()[:400] if not i.case.reject]
    failed = _records(AddsNoise(), items)
    assert failed and not [r["id"] for r in failed if names(r["diagnosis"])]


def test_a_correct_backend_has_no_diagnosis():
    assert not _records(MutantBackend(Mutant("reference", "none", DEFECTS[0].backend.__mro__[1])), items_round_robin()[:300])


def test_the_reports_doc_counts_the_models():
    from pathlib import Path

    text = " ".join((Path(__file__).parents[2] / "docs" / "reports.md").read_text().split())
    assert f"`conformance/judge/analysis/models/` ({len(DEFECTS)} named ways" in text


def test_three_bugs_at_once_are_named_where_indices_carry_the_third():
    """A loop that stops at the begin padding, a sentinel seed and Indices within the plane (MNN's
    Indices kernel): no pair gives its answer, the three together do."""

    three = stacked(BY_NAME["indices_per_plane"].backend, stacked(BY_NAME["accumulator_starts_at_sentinel"].backend,
                                                                  BY_NAME["window_loop_stops_at_begin_padding"].backend))
    backend = MutantBackend(Mutant("three", "three bugs", three))
    items = [i for i in items_round_robin() if not i.case.reject and i.id.startswith("MaxPool-12/")
             and len(i.outputs) == 2 and i.case.attributes.get("pads") and any(i.case.attributes["pads"][:1])
             and i.inputs[0].dtype.name == "float32"][:40]
    failed = _records(backend, items)
    named = [r for r in failed if "indices_per_plane+accumulator_starts_at_sentinel+window_loop_stops_at_begin_padding"
             in names(r["diagnosis"])]
    assert len(named) >= 5, [(r["id"], names(r["diagnosis"])) for r in failed][:5]
    parts = {"indices_per_plane", "accumulator_starts_at_sentinel", "window_loop_stops_at_begin_padding"}
    assert all(set(name.split("+")) <= parts for r in failed for name in names(r["diagnosis"])), [names(r["diagnosis"]) for r in failed]


def test_a_stacked_model_stacked_again_keeps_every_layer():
    """(float16 through float32 over the seed) over NaN never selected: the seed still runs, so a
    window of NaN only points at its plane's first element (OpenVINO's float16 NaN windows)."""
    from onnx import TensorProto, helper


    node = helper.make_node("MaxPool", ["X"], ["Y", "I"], kernel_shape=[2], strides=[2])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT16, [1, 1, 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT16, None),
                               helper.make_tensor_value_info("I", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    pair = stacked(BY_NAME["float16_seeded_in_float32_at_plane_origin"].backend, BY_NAME["nan_never_selected_seed_kept"].backend)
    y, indices = pair.run_model(model, [np.array([[[1, 2, np.nan, np.nan]]], np.float16)])
    assert y.tolist() == [[[2.0, -np.inf]]] and indices.tolist() == [[[1, 0]]]


def test_int64_pooled_as_int32_then_through_float32_is_both_models_with_the_top_clamped():
    """OpenVINO's CPU plugin: int64 runs as int32, and int32 through float32, converted back with a
    clamp at the largest float below 2^31 (2147483520), so INT32_MAX comes back as 2147483520."""
    from onnx import TensorProto, helper


    def pooled(name: str, elem: int, x: np.ndarray) -> list:
        node = helper.make_node("MaxPool", ["X"], ["Y", "I"], domain="org.openvinotoolkit", kernel=[1], strides=[1],
                                pads_begin=[0], pads_end=[0])
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", elem, [1, 1, x.size])],
                                  [helper.make_tensor_value_info("Y", elem, None),
                                   helper.make_tensor_value_info("I", TensorProto.INT64, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("org.openvinotoolkit", 8)])
        backend = stacked(*(BY_NAME[n].backend for n in name.split("+"))) if "+" in name else BY_NAME[name].backend
        return backend.run_model(model, [x.reshape(1, 1, -1)])[0].ravel().tolist()

    top = 2**31 - 1
    assert pooled("int32_through_float32", TensorProto.INT32, np.array([top, -2**31, 2**24 + 1], np.int32)) == [
        2147483520, -2**31, 2**24]
    assert pooled("int64_through_int32+int32_through_float32", TensorProto.INT64,
                  np.array([top, -2**63, 2**31 + 3], np.int64)) == [2147483520, 0, -2**31]
    int64_item = Facts("MaxPool", "org.openvinotoolkit", np.int64, {}, wants_indices=False, output_shape_given=False)
    assert BY_NAME["int32_through_float32"].applies(int64_item)  # so that diagnosis tries the pair


def test_nan_lost_by_comparison_is_named_beside_indices_sought_by_equality_within_the_plane():
    """tinygrad's max pooling: a window folded by comparison from its first element, Indices sought
    by equality after it (a NaN maximum matches nothing) and counted within the plane."""

    three = stacked(BY_NAME["indices_per_plane"].backend, stacked(BY_NAME["index_sought_by_equality"].backend,
                                                                  BY_NAME["nan_only_from_the_first_element"].backend))
    backend = MutantBackend(Mutant("three", "three bugs", three))
    items = [i for i in items_round_robin() if not i.case.reject and "nan" in i.id and len(i.outputs) == 2
             and i.id.startswith("MaxPool-12/") and i.inputs[0].dtype.name == "float32"][:30]
    failed = _records(backend, items)
    assert len(failed) >= 5 and all(names(r["diagnosis"]) for r in failed), [(r["id"], names(r["diagnosis"])) for r in failed][:5]
    parts = {"indices_per_plane", "index_sought_by_equality", "nan_only_from_the_first_element"}
    assert all(set(name.split("+")) <= parts | {"nan_only_from_the_first_element_padding_first"}
               for r in failed for name in names(r["diagnosis"])), [names(r["diagnosis"]) for r in failed]
    lines = [line.signature for line in failure_clusters(failed)[backend.name]]
    assert any("NaN loses comparisons" in line for line in lines) and all(line.diagnosed for line in
                                                                         failure_clusters(failed)[backend.name]), lines


def test_a_model_of_indices_alone_is_found_under_a_reading_that_changes_y():
    """tinygrad: Indices within the plane, and a negative SAME total split as one of its readings
    (Y differs from the default reading, which no model of Indices alone may explain)."""
    from conformance.judge.analysis.catalogue import BY_NAME

    reading = "same-pad-negative:negative-split-floor"
    backend = MutantBackend(Mutant("read", "a reading", BY_NAME["indices_per_plane"].backend.configured(reading)))
    items = [i for i in items_round_robin() if "same_upper_negative_total" in i.id and "y_indices" in i.id
             and "planes2x3" in i.id][:4]
    failed = _records(backend, items)
    assert failed and all(f"indices_per_plane@{reading}" in names(r["diagnosis"]) for r in failed), \
        [(r["id"], names(r["diagnosis"])) for r in failed]


def test_a_round_trip_with_three_bugs_is_named_where_the_pooling_s_indices_carry_one():
    """tinygrad's round trip: its pooling's Indices within the plane, its unpooling within the plane
    and its pads read as torch's pairs (the output's shape is the pads' alone)."""

    three = stacked(BY_NAME["indices_per_plane"].backend, stacked(
        BY_NAME["unpool_summed_per_plane"].backend, BY_NAME["unpool_pads_paired_from_the_last_axis"].backend))
    backend = MutantBackend(Mutant("three", "three bugs", three))
    items = [i for i in items_round_robin() if i.id.startswith("MaxUnpool-11/shapes_by_rank/2d_planes-default_shape")]
    failed = _records(backend, items)
    parts = {"indices_per_plane", "unpool_summed_per_plane", "unpool_pads_paired_from_the_last_axis"}
    assert failed and all(names(r["diagnosis"]) and all(set(n.split("+")) == parts for n in names(r["diagnosis"])) for r in failed), \
        [(r["id"], names(r["diagnosis"])) for r in failed]


def test_a_shape_whose_scatter_the_reference_refuses_is_tried_beside_another_scatter_first():
    """tinygrad's round trip of a float64 input with an end pad: its pads read as torch's pairs give
    a smaller output, whose scatter the reference refuses (an index past its end), and its one-hot
    scatter drops that index. The pair comes before the narrower types' half of the pairs runs out."""

    pair = stacked(BY_NAME["unpool_summed_per_plane"].backend, BY_NAME["unpool_pads_paired_from_the_last_axis"].backend)
    backend = MutantBackend(Mutant("pair", "two bugs", pair))
    items = [i for i in items_round_robin() if i.id == "MaxUnpool-11/shapes_by_rank/3d_end_pad-default_shape[float64]"]
    failed = _records(backend, items)
    assert failed and all("unpool_pads_paired_from_the_last_axis+unpool_summed_per_plane" in names(r["diagnosis"])
                          for r in failed), [(r["id"], names(r["diagnosis"])) for r in failed]


def _pooled_by(model_name: str, x: np.ndarray, kernel: list[int]) -> list[float]:
    from onnx import TensorProto, helper

    from conformance.judge.analysis.catalogue import BY_NAME

    node = helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=kernel)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    return BY_NAME[model_name].backend.run_model(model, [x])[0].ravel().tolist()


def test_nan_compared_as_mlas_pools_down_the_columns_then_along_the_row():
    """MLAS's vector kernels, worked by hand from pooling.cpp and given as such by ONNX Runtime
    1.32.0: a column is reduced with maxps (the element after a NaN replaces it), the width's last
    columns (modulo 4) with std::max (NaN passed over), then the row of columns with maxps. The
    3-D kernel seeds each column at the lowest float, the 2-D one starts from its first row."""
    nan = float("nan")
    # columns, each (d0 h0, d0 h1, d1 h0, d1 h1): -1, NaN, NaN, 5 and, one at a time, 7
    columns = np.array([[1, 2, nan, 5, nan], [nan, 3, nan, 0, 7], [-1, 4, nan, 0, nan], [-1, nan, nan, 0, 6]], np.float32)
    x3 = columns.reshape(2, 2, 5)[None, None]
    assert np.array_equal(_pooled_by("nan_compared_as_mlas_pools", x3, [2, 2, 2]), [nan, nan, 5, 7], equal_nan=True)
    # columns from the first row: NaN, 3, 2, -1 and, one at a time, NaN (std::max keeps a first NaN)
    x2 = np.array([[[[1, nan, 2, nan, nan], [nan, 3, 2, -1, 7]]]], np.float32)
    assert np.array_equal(_pooled_by("nan_compared_as_mlas_pools", x2, [2, 2]), [3, 3, 2, nan], equal_nan=True)
    # a row narrower than a vector is all scalar columns: std::max from the seed passes the NaN over
    # (ORT gives -3.4028235e+38 for both); the window without NaN keeps the documents' -inf, which the
    # seed turns into the lowest float in ORT (accumulator_starts_at_lowest_finite's cause, not this model's)
    x = np.array([-np.inf, nan], np.float32).reshape(1, 1, 1, 1, 2)
    assert _pooled_by("nan_compared_as_mlas_pools", x, [1, 1, 1]) == [-np.inf, float(np.finfo(np.float32).min)]


def _pooled_with_indices(model_name: str, x: np.ndarray, kernel: list[int], **attributes) -> tuple[np.ndarray, np.ndarray]:
    from onnx import TensorProto, helper


    node = helper.make_node("MaxPool", ["X"], ["Y", "Indices"], kernel_shape=kernel, **attributes)
    element = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", element, x.shape)],
                              [helper.make_tensor_value_info("Y", element, None),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    names = model_name.split("+")
    backend = BY_NAME[names[0]].backend if len(names) == 1 else stacked(BY_NAME[names[0]].backend, BY_NAME[names[1]].backend)
    y, indices = backend.run_model(model, [x])
    return y, indices


def test_indices_per_batch_element_keep_the_channel_offset():
    """OpenCV DNN 5.0.0's MaxPool with Indices, as it answers: X = 0..7 as [2, 2, 1, 2], kernel 1."""
    _, indices = _pooled_with_indices("indices_per_batch_element", np.arange(8, dtype=np.float32).reshape(2, 2, 1, 2), [1, 1])
    assert indices.ravel().tolist() == [0, 1, 2, 3, 0, 1, 2, 3]


def test_a_window_nothing_is_selected_in_gives_zero_at_its_plane_s_first_element():
    """OpenCV DNN 5.0.0's Indices path: a running maximum from -FLT_MAX that moves on v > vmax only,
    and 0 at the plane's first element where it never moved (-inf, NaN, -FLT_MAX itself)."""
    lowest, nan = float(np.finfo(np.float32).min), float("nan")
    x = np.array([[[[-np.inf, -np.inf, 1, 2]], [[nan, nan, lowest, 5]]]], np.float32)
    y, indices = _pooled_with_indices("nothing_selected_gives_zero", x, [1, 2])
    assert y.ravel().tolist() == [0, 1, 2, 0, 0, 5] and indices.ravel().tolist() == [0, 2, 3, 4, 4, 7]


def test_float16_computed_as_float32_gives_another_bug_float32_s_values():
    """float16 pooled in float32 (OpenCV DNN 5.0.0): beside a padding of the lowest finite value,
    a window of -inf and padding gives float32's lowest, not float16's."""
    x = np.array([[[-np.inf, 1]]], np.float16)
    y, _ = _pooled_with_indices("float16_computed_as_float32+padding_is_lowest_finite", x, [2], pads=[1, 0])
    assert y.dtype == np.float32 and y.ravel().tolist() == [float(np.finfo(np.float32).min), 1.0]


def test_no_model_is_named_for_a_value_the_documents_leave_undefined():
    """tinygrad's Indices within the plane, and its wrapped index in a window over padding only
    (window-in-padding-only leaves that value undefined): the item is diagnosed by the first alone;
    likewise OpenCV's, whose Y is 0 there."""

    both = stacked(BY_NAME["indices_per_plane"].backend, BY_NAME["index_wrapped_where_no_element"].backend)
    backend = MutantBackend(Mutant("both", "Indices per plane, wrapped where no element", both))
    items = [i for i in items_round_robin() if i.id == "MaxPool-12/padding_windows_by_path/1d_whole_window_in_pad-y_indices-planes2x3[float32]"]
    failed = _records(backend, items)
    assert [names(r["diagnosis"]) for r in failed] == [["indices_per_plane"]]
    # OpenCV's Indices per batch element, and 0 in Y where a window holds nothing: Y differs only
    # where any value is right, so a model of Indices alone explains the item
    both = stacked(BY_NAME["indices_per_batch_element"].backend, BY_NAME["nothing_selected_gives_zero"].backend)
    backend = MutantBackend(Mutant("both", "Indices per batch element, 0 where nothing is selected", both))
    items = [i for i in items_round_robin() if i.id == ("MaxPool-12/explicit_pad_questions_by_path/"
                                                         "window_in_padding_begin-2d_s2_pend-planes2x3-y_indices[float32]")]
    assert [names(r["diagnosis"]) for r in _records(backend, items)] == [["indices_per_batch_element"]]


class QuietNaNsAsX86Gives:
    """Two defect models at once (of no hook in common: the pair is tried only where together
    they change every element the backend got wrong), every float32 NaN of Y given as x86's default
    NaN, 0xffc00000, as SSE's maxps gives it whatever NaN came in."""

    version = "0"
    X86_NAN = np.array([0xFFC00000], np.uint32).view(np.float32)[0]

    def __init__(self, first: str, second: str):
        self.name = f"{first}+{second} with x86 NaNs"
        self.pair = stacked(BY_NAME[first].backend, BY_NAME[second].backend)

    def details(self):
        return {}

    def run(self, model, inputs):
        y, *rest = self.pair.run_model(model, [inputs[i.name] for i in model.graph.input])
        return [np.where(np.isnan(y), self.X86_NAN, y).astype(np.float32), *rest]


def test_a_pair_whose_nans_come_back_as_x86_s_default_nan_is_diagnosed_as_the_pair():
    """The item's NaN is 0x7fc00000; the backend's is 0xffc00000. The judge takes any NaN for any
    NaN, and so must the pair's filter, or the NaN positions count as wrong elements neither model
    gives and the pair is never tried (compare.py's one equality)."""
    item = next(i for i in bundled_items() if i.id == "MaxPool-12/edge_values_as_answers_by_path/"
                "valuesedge_values_nan-2d_same_lower_s2-yi-planes2x6[float32]")
    backend = QuietNaNsAsX86Gives("accumulator_starts_at_zero", "kernel_reversed")
    written = consult(item, 0, REGISTRY).written["X"]
    assert {int(bits) for bits in written[np.isnan(written)].view(np.uint32)} == {0x7FC00000}
    verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL and names(verdict.diagnosis) == ["accumulator_starts_at_zero+kernel_reversed"]

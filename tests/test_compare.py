"""The comparator: bit-exact values, strict types and shapes, indices judged by what they mean,
and one outcome per kind of backend behaviour."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from conformance.backends import Unsupported
from conformance.expand.items import expand
from conformance.judge.compare import compare, same_bits
from conformance.judge.verdict import Outcome, evaluate, expected_outputs
from conformance.load.cases import bundled_case_dir, load_case_file, load_registry
from reference_backend import ReferenceBackend
from tests.meta.support.faulty_backends import is_valid_twin

REGISTRY = load_registry(bundled_case_dir())


def items_from(tmp_path, text):
    path = tmp_path / "cases.yaml"
    path.write_text(textwrap.dedent(text))
    return [item for case in load_case_file(path, load_registry(bundled_case_dir())) for item in expand(case)]


TIES = """\
    op: MaxPool
    cases:
      - name: ties
        description: two windows, the first with a tie
        provenance: {document: test, example: e}
        versions: [12]
        attributes: {kernel_shape: [2], strides: [2], storage_order: STORAGE}
        inputs:
          X: {dtype: float32, data: DATA}
        outputs:
          Y: derived
          Indices: derived
    """


def ties_item(tmp_path, data="[[[5, 5, 1, 5]]]", storage=0):
    (item,) = items_from(tmp_path, TIES.replace("DATA", data).replace("STORAGE", str(storage)))
    inputs = item.to_model(item.case_inputs(0))
    return item, inputs, expected_outputs(item, inputs)


@pytest.mark.parametrize("indices, ok", [([0, 3], True), ([1, 3], True), ([2, 3], False), ([0, 1], False),
                                         ([0, -1], False), ([0, 4], False)])
def test_an_index_passes_when_it_points_at_a_maximum_of_its_own_window(tmp_path, indices, ok):
    item, inputs, expected = ties_item(tmp_path)
    got = np.array([[indices]], dtype=np.int64)
    problems = compare(item, inputs, expected, [expected["Y"], got])
    assert (problems == []) is ok, problems


def test_an_index_into_padding_fails_even_when_the_maximum_equals_the_pad_value(tmp_path):
    (item,) = items_from(tmp_path, TIES.replace("strides: [2]", "strides: [1], pads: [1, 1]")
                         .replace("DATA", "[[[-.inf, -.inf]]]").replace("STORAGE", "0"))
    inputs = item.to_model(item.case_inputs(0))
    expected = expected_outputs(item, inputs)
    assert expected["Indices"].tolist() == [[[0, 0, 1]]]
    assert compare(item, inputs, expected, [expected["Y"], np.array([[[0, 1, 1]]])]) == []
    (problem,) = compare(item, inputs, expected, [expected["Y"], np.array([[[-1, 0, 1]]])])
    assert "Indices[0, 0, 0] = -1" in problem.text()


def test_column_major_indices_are_decoded_per_plane(tmp_path):
    (item,) = items_from(tmp_path, """\
        op: MaxPool
        cases:
          - name: column_major
            description: storage_order 1 over two channels
            provenance: {document: test, example: e}
            versions: [12]
            attributes: {kernel_shape: [2, 1], storage_order: 1}
            inputs:
              X: {dtype: float32, data: [[[[1, 4], [3, 2]], [[8, 5], [6, 7]]]]}
            outputs:
              Y: {data: [[[[3, 4]], [[8, 7]]]]}
              Indices: {data: [[[[1, 2]], [[4, 7]]]]}
        """)
    inputs = item.to_model(item.case_inputs(0))
    expected = expected_outputs(item, inputs)
    assert compare(item, inputs, expected, [expected["Y"], expected["Indices"]]) == []
    row_major = np.array([[[[2, 1]], [[4, 7]]]])
    assert compare(item, inputs, expected, [expected["Y"], row_major])


def test_values_compare_bit_for_bit_with_any_nan_equal_to_any_nan():
    quiet, payload = np.array([np.nan], np.float32), np.array([0x7FC00001], np.uint32).view(np.float32)
    assert same_bits(quiet, payload).all()
    assert not same_bits(np.array([0.0], np.float32), np.array([-0.0], np.float32)).any()


@pytest.mark.parametrize("mutate, words", [
    (lambda y, i: [y.astype(np.float64), i], "element type float64, expected float32"),
    (lambda y, i: [y.reshape(1, 2, 1), i], "shape [1, 2, 1], expected [1, 1, 2]"),
    (lambda y, i: [y + 1, i], "Y: 2 of 2 elements differ"),
])
def test_type_shape_and_value_mismatches_are_named(tmp_path, mutate, words):
    item, inputs, expected = ties_item(tmp_path)
    problems = compare(item, inputs, expected, mutate(expected["Y"], expected["Indices"]))
    assert problems and words in problems[0].text()


@pytest.mark.parametrize("answer, words", [
    (lambda outputs: outputs[:1], "returned 1 outputs for a node with 2 (Y, Indices)"),
    (lambda outputs: [outputs[0].tolist(), outputs[1]], "output 0 is list, not a numpy array"),
    (lambda outputs: None, "returned NoneType, not a list of arrays"),
])
def test_an_answer_that_is_not_one_array_per_output_is_an_error(tmp_path, answer, words):
    (item,) = items_from(tmp_path, TIES.replace("DATA", "[[[5, 5, 1, 5]]]").replace("STORAGE", "0"))
    verdict = evaluate(item, Scripted(lambda m, i: answer(reference(m, i))), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.ERROR and verdict.message == f"returned garbage: {words}"


class Scripted:
    """A backend that answers with a fixed behaviour."""

    name, version = "scripted", "0"

    def __init__(self, behaviour):
        self.behaviour = behaviour

    def details(self):
        return {}

    def run(self, model, inputs):
        return self.behaviour(model, inputs)


def reference(model, inputs):
    return ReferenceBackend.run_model(model, [inputs[i.name] for i in model.graph.input])


def raises(exception):
    """Raises on the item; runs its valid twin (the control a refusal is judged against) correctly."""
    def run(model, inputs):
        if is_valid_twin(model):
            return reference(model, inputs)
        raise exception
    return run


def refuses_everything(model, inputs):
    raise RuntimeError("no kernels at all")


def declares_nothing_runs(model, inputs):
    raise Unsupported("no kernels at all")


def bundled(op, name, version, file=None):
    registry = load_registry(bundled_case_dir())
    case = next(c for c in load_case_file(bundled_case_dir() / (file or f"{op.lower()}.yaml"), registry) if c.name == name)
    return next(item for item in expand(case) if item.version == version)


@pytest.mark.parametrize("behaviour, outcome", [
    (reference, Outcome.PASS),
    (lambda m, i: [np.zeros_like(o) for o in reference(m, i)], Outcome.FAIL),
    (raises(RuntimeError("kernel crashed")), Outcome.ERROR),
    (raises(Unsupported("no kernel for uint8")), Outcome.UNSUPPORTED),
    (declares_nothing_runs, Outcome.UNSUPPORTED),  # it cannot run MaxPool-12 uint8 at all, and says so
    (refuses_everything, Outcome.ERROR),  # its valid twin too, undeclared: a bug on the minimal valid model
])
def test_each_backend_behaviour_has_its_own_outcome(behaviour, outcome):
    verdict = evaluate(bundled("MaxPool", "2d_uint8", 12), Scripted(behaviour), seed=0, registry=REGISTRY)
    assert verdict.outcome is outcome


def test_an_open_ambiguity_is_divergent_and_names_the_reading_observed():
    item = bundled("MaxUnpool", "with_output_shape", 11)
    verdict = evaluate(item, Scripted(reference), seed=0, registry=REGISTRY)
    assert (verdict.outcome, verdict.message) == (Outcome.DIVERGENT, "observed: output-index-space")
    printed = [o.expected for o in item.outputs]
    verdict = evaluate(item, Scripted(lambda m, i: printed), seed=0, registry=REGISTRY)
    assert verdict.message == "observed: inferred-shape-embedded (the case's outputs)"
    # Elements that no reading gives are a failure, open question or not.
    verdict = evaluate(item, Scripted(lambda m, i: [np.ones_like(printed[0])]), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL
    assert verdict.message.startswith("output: 25 of 25 positions match no reading of maxunpool-output-shape-index-space; ")


MUST_REJECT = """\
    op: MaxPool
    cases:
      - name: indices_at_version_1
        description: MaxPool-1 has no Indices output
        provenance: {document: test, example: e}
        versions: [1]
        attributes: {kernel_shape: [2]}
        inputs:
          X: {dtype: float32, data: [[[1, 2]]]}
        outputs: [Y, Indices]
        reject: MaxPool-1 has one output
    """


def test_a_must_reject_item_passes_on_refusal_and_fails_on_acceptance(tmp_path):
    (item,) = items_from(tmp_path, MUST_REJECT)
    assert [o.name for o in item.model.graph.output] == ["Y", "Indices"]
    refused = evaluate(item, Scripted(reference), seed=0, registry=REGISTRY)
    assert refused.outcome is Outcome.PASS
    assert refused.message == "refused: InvalidModel: MaxPool-1 has 1 to 1 outputs, got 2"
    accepted = evaluate(item, Scripted(lambda m, i: [np.zeros((1, 1, 1), np.float32)]), seed=0, registry=REGISTRY)
    assert accepted.outcome is Outcome.FAIL
    assert accepted.message == "accepted an invalid model: MaxPool-1 has one output"


@pytest.mark.parametrize("answer, problem", [
    (np.zeros((1, 1, 1), np.float32), "returned ndarray, not a list of arrays"),
    (np.float32(0), "returned float32, not a list of arrays"),
    (None, "returned NoneType, not a list of arrays"),
    ([None], "output 0 is NoneType, not a numpy array"),
])
def test_garbage_answering_a_model_that_must_be_refused_is_an_error_not_an_acceptance(tmp_path, answer, problem):
    [item] = items_from(tmp_path, MUST_REJECT)
    verdict = evaluate(item, Scripted(lambda m, i: answer), seed=0, registry=REGISTRY)
    assert (verdict.outcome, verdict.message) == (Outcome.ERROR, f"returned garbage: {problem}")


def test_a_backend_that_writes_into_its_inputs_changes_neither_the_judge_nor_the_model(tmp_path):
    [item] = items_from(tmp_path, TIES.replace("STORAGE", "0").replace("DATA", "[[[1, 5, 3, 2]]]"))
    model_before = item.model.SerializeToString()

    def vandal(model, inputs):
        values, _ = reference(model, inputs)
        inputs["X"][...] = 5  # now every element is a window's maximum
        del model.graph.node[:]
        return [values, np.array([[[0, 2]]], np.int64)]  # the first window's answer points at 1

    verdict = evaluate(item, Scripted(vandal), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL and verdict.message.startswith("Indices: 1 of 2 indices do not point")
    assert item.model.SerializeToString() == model_before


def test_an_answer_mixing_readings_is_divergent_and_one_no_reading_gives_fails():
    # Windows [NaN, 1], [3, NaN], [NaN, NaN]: nan-propagates [NaN, NaN, NaN], nan-ignored
    # [NaN, 3, NaN], nan-never-selected [1, 3, -inf].
    item = bundled("MaxPool", "nan_first_in_a_window", 12, "maxpool_open_questions.yaml")
    mixed = np.array([[[1, 3, np.nan]]], np.float32)
    verdict = evaluate(item, Scripted(lambda m, i: [mixed]), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.DIVERGENT and verdict.reading == "mixed readings"
    lowest_finite = np.array([[[1, 3, np.finfo(np.float32).min]]], np.float32)  # MLAS's seed, no reading's
    verdict = evaluate(item, Scripted(lambda m, i: [lowest_finite]), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL
    assert verdict.message.startswith("Y: 1 of 3 positions match no reading of nan-in-window; Y[0, 0, 2] = -3.4028234663852886e+38")


def test_a_question_whose_other_readings_refuse_still_fails_elements_no_reading_gives():
    # maxunpool-output-shape-smaller: the other reading refuses the model, so only the case's
    # outputs [5, 6, 0] answer; a value written where no index points is no reading's.
    item = bundled("MaxUnpool", "output_shape_smaller_than_default", 11, "maxunpool_edges.yaml")
    verdict = evaluate(item, Scripted(lambda m, i: [np.array([[[5, 6, 7]]], np.float32)]), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL and verdict.message.startswith("output: 1 of 3 positions match no reading of ")


def test_y_and_indices_of_two_readings_at_one_position_are_no_readings_answer():
    # nan-propagates' Y (NaN) beside nan-ignored's Indices (at a number) matches neither reading.
    from conformance.judge.ambiguities import answer
    from conformance.semantics import Readings
    item = bundled("MaxPool", "nan", 8, "maxpool_edges.yaml")
    item = next(i for i in expand(item.case) if i.version == 8 and i.outputs[0].dtype.name == "float16")
    inputs = item.to_model(item.case_inputs(0))
    propagated = answer(item, inputs).outputs
    ignored = answer(item, inputs, Readings({"nan-in-window": "nan-ignored"})).outputs
    verdict = evaluate(item, Scripted(lambda m, i: [propagated[0], ignored[1]]), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL, verdict.message
    assert verdict.message.startswith("Y and Indices: ") and "positions match no reading of nan-in-window" in verdict.message


def test_an_output_of_a_batch_of_0_under_an_open_question_fails_with_one_line():
    # fuzz crash: IndexError in _unexplained_line, which looked for a first position in an output without any
    item = bundled("MaxUnpool", "with_output_shape", 11)
    empty = np.zeros((0,) + tuple(item.outputs[0].expected.shape[1:]), item.outputs[0].expected.dtype)
    verdict = evaluate(item, Scripted(lambda m, i: [empty]), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL
    assert verdict.message.startswith("output shapes no reading of maxunpool-output-shape-index-space gives: output [0, 1, 5, 5]")


def test_y_of_a_batch_of_0_beside_indices_under_an_open_question_fails_with_one_line(tmp_path):
    # The fuzz's crash: Y (0, 1, 2) beside Indices (1, 1, 2) under same-pad-negative, where the
    # search for the first unexplained position of Y found none (IndexError) and the run was lost.
    (item,) = items_from(tmp_path, """\
        op: MaxPool
        cases:
          - name: negative_same_total
            description: a negative SAME total, with Indices
            provenance: {document: test, example: e}
            versions: [12]
            attributes: {kernel_shape: [1], strides: [4], auto_pad: SAME_UPPER}
            inputs:
              X: {dtype: float32, data: [[[1, 2, 3, 4, 5, 6, 7]]]}
            outputs:
              Y: derived
              Indices: derived
        """)
    answer = [np.zeros((0, 1, 2), np.float32), np.zeros((1, 1, 2), np.int64)]
    verdict = evaluate(item, Scripted(lambda m, i: answer), seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL
    assert verdict.message == ("output shapes no reading of same-pad-negative gives: Y [0, 1, 2] (the default "
                               "reading: [1, 1, 2]), Indices [1, 1, 2] (the default reading: [1, 1, 2])")


def test_two_releases_of_one_backend_stay_apart_in_a_merged_report(tmp_path):
    """`conformance report A.json B.json` of ort 1.15.1 and ort 1.32.0: a column each, ort@version."""
    from conformance.report.results import load, totals

    documents = []
    for version, outcome in (("1.15.1", "unsupported"), ("1.32.0", "pass")):
        path = tmp_path / f"{version}.json"
        path.write_text(json.dumps(_one_item_run("ort", version, outcome)))
        documents.append(path)
    merged = load(documents)
    assert [b["name"] for b in merged["environment"]["backends"]] == ["ort@1.15.1", "ort@1.32.0"]
    assert totals(merged["items"]) == {"ort@1.15.1": {"unsupported": 1}, "ort@1.32.0": {"pass": 1}}


def _one_item_run(backend: str, version: str, outcome: str) -> dict:
    return {"schema_version": 2, "catalogue": {}, "partial": False, "interrupted": False, "started": "2026-11-26T00:00:00Z",
            "finished": "2026-11-26T00:00:01Z", "summary": {outcome: 1}, "collection_errors": [],
            "environment": {"suite_version": "0", "backends": [{"name": backend, "version": version, "details": {}}],
                            "onnx": "1", "numpy": "2", "python": "3", "platform": "p", "seed": 0, "cases": "cases"},
            "items": [{"id": "MaxPool-22/x[float32]", "op": "MaxPool", "version": 22, "backend": backend,
                       "backend_version": version, "outcome": outcome, "message": ""}]}

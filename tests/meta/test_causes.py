"""Failures are grouped by what differs structurally, then sub-grouped by detail: a root bug is
one or two causes, however its values, signs and element types vary, and a cause's label names
nothing its items do not show (no open question that no difference depends on)."""

from __future__ import annotations

import pytest
from conformance.plugin import PACKAGE_DIR
from conformance.report.results import read_results
from conformance.report.causes import cause_signature, detail_signature, failure_clusters
from bench.cause_trial import trial
from tests.support.named import written

pytest_plugins = ["pytester"]


def _record(message: str, summary: str, shown: list[str], dtype: str = "float32", **more) -> dict:
    return {"id": f"MaxPool-12/x[{dtype}]", "op": "MaxPool", "domain": "ai.onnx", "version": 12, "backend": "b",
            "outcome": "fail", "message": message, "attributes": {"kernel_shape": [2], "pads": [1, 1]},
            "inputs": [{"name": "X", "shape": [1, 1, 4], "dtype": dtype}],
            "diff": [{"output": "Y", "summary": summary, "shown": shown}], **more}


def test_one_bug_over_element_types_and_signs_is_one_cause_with_sub_groups():
    # a -inf maximum read as 0 (int8 padded with -inf...), on float32 and int8, negative and -inf
    records = [
        _record("Y: 1 of 3 elements differ; Y[0, 0, 0]: expected -inf (0xff800000), got 0 (0x0)",
                "Y: 1 of 3 elements differ", ["Y[0, 0, 0]: expected -inf (0xff800000), got 0 (0x0)"],
                where="windows over padding"),
        _record("Y: 2 of 5 elements differ; Y[0, 0, 4]: expected -3, got 0", "Y: 2 of 5 elements differ",
                ["Y[0, 0, 4]: expected -3, got 0", "Y[0, 0, 0]: expected -2, got 0"], dtype="int8",
                where="windows over padding"),
    ]
    (cluster,) = failure_clusters(records)["b"]
    assert cluster.signature == "fail: Y values differ in windows over padding"  # as the judge found them
    assert len(cluster.details) == 2  # -inf and a negative integer stay apart below


def test_a_difference_no_reading_gives_is_labelled_without_the_question_it_runs_into():
    record = _record("Y and Indices: 3 of 5 positions match no reading of storage-order-scope; Y[0, 0, 1] = 0",
                     "Y: 3 of 5 elements differ", ["Y[0, 0, 1]: expected 5, got 0"])
    assert "storage-order-scope" not in cause_signature(record) + detail_signature(record)
    assert detail_signature(record).startswith("fail: Y and Indices: # of # positions match no reading; ")


def test_refusals_differing_only_in_element_types_and_shapes_are_one_cause():
    records = [{"id": f"MaxPool-12/{t}", "op": "MaxPool", "version": 12, "backend": "b", "outcome": "error",
                "message": f"RuntimeError: max_pool: dtype '{t}' is not supported for shape ({n}, 2)"}
               for t, n in (("int8", 1), ("float16", 3))]
    assert len(failure_clusters(records)["b"]) == 1


@pytest.mark.slow
def test_causes_per_root_bug_on_a_trial_of_mutants_with_one_bug_and_several():
    rows = trial(share=16)  # every 16th item: about 600, for each of 13 backends
    bugs, causes = sum(r[1] for r in rows), sum(r[3] for r in rows)
    assert causes <= 2 * bugs, rows
    assert all(c <= 2 * b + 2 for _, b, _, c in rows), rows  # a bug seen downstream (MaxUnpool) adds its own


def test_invalid_models_run_anyway_are_one_cause_sub_grouped_by_rule():
    records = [{"id": f"MaxPool-22/{n}", "op": "MaxPool", "version": 22, "backend": "b", "outcome": "fail",
                "message": f"accepted an invalid model: {rule}"} for n, rule in
               (("a", "storage_order 2 names no order"), ("b", "a pad of -1 is below the documented minimum of 0"))]
    (cluster,) = failure_clusters(records)["b"]
    assert cluster.signature == "fail: accepted an invalid model" and len(cluster.details) == 2


def test_invalid_models_of_another_domain_run_anyway_are_a_line_of_their_own():
    """Each domain is checked by code of its own (OpenVINO: its ONNX frontend, its core's op checks)."""
    records = [{"id": f"{op}/{n}", "op": "MaxPool", "domain": domain, "version": 8, "backend": "b", "outcome": "fail",
                "message": f"accepted an invalid model: {rule}"} for n, (op, domain, rule) in enumerate(
                    (("MaxPool-8", "ai.onnx", "storage_order 2 names no order"),
                     ("org.openvinotoolkit.MaxPool-8", "org.openvinotoolkit", "index_element_type is i64 or i32")))]
    assert sorted(c.signature for c in failure_clusters(records)["b"]) == [
        "fail: accepted an invalid model", "fail: accepted an invalid model of domain org.openvinotoolkit"]


def test_invalid_models_a_runtime_checks_the_schema_of_are_a_line_per_rule_they_break():
    """A runtime that ran no model outside its version's signature has a check for the domain: each
    rule it lets through is a gap of its own (two cases citing one sentence, one gap). One that ran
    such a model checks against no schema: one line, its rules sub-groups."""
    def accepted(domain, rule_words, rule, breach=None):
        record = {"id": f"{domain}.MaxPool-8/{rule_words}[float32]", "op": f"{domain}.MaxPool", "domain": domain,
                  "case": rule_words.replace(" ", "_"),
                  "version": 8, "backend": "b", "outcome": "fail", "expected": "reject", "rule": rule,
                  "message": f"accepted an invalid model: {rule_words}"}
        return record | ({"breach": breach} if breach else {})

    checked = [accepted("org.openvinotoolkit", "pads start from 0", "004.txt line 37"),
               accepted("org.openvinotoolkit", "pads start from 0, whatever auto_pad says", "004.txt line 37"),
               accepted("org.openvinotoolkit", "index_element_type is i64 or i32", "004.txt line 85")]
    assert sorted(c.signature for c in failure_clusters(checked)["b"]) == [
        "fail: accepted an invalid model of domain org.openvinotoolkit: index_element_type is i64 or i32 (004.txt line 85)",
        "fail: accepted an invalid model of domain org.openvinotoolkit: pads start from 0 (004.txt line 37)"]
    unpool = {**accepted("ai.onnx", "pads take values greater than or equal to 0", "002.txt line 55"), "case": "negative_pads"}
    pool = {**accepted("ai.onnx", "a pad of -1 is below the documented minimum of 0", "003.txt line 83"),
            "case": "negative_pads", "id": "MaxPool-8/negative_pads[float32]"}
    symbolic = {**pool, "case": "negative_pads_shape_symbolic", "id": "MaxPool-8/negative_pads_shape_symbolic[float32]"}
    (line,) = failure_clusters([unpool, pool, symbolic])["b"]  # one check: a case name, a sentence
    assert line.signature == ("fail: accepted an invalid model: pads take values greater than or equal to 0 "
                              "(002.txt line 55; 003.txt line 83)")
    unchecked = [*checked, accepted("org.openvinotoolkit", "MaxPool-8 has no attribute ceil_mode", "004.txt line 9",
                                    breach="MaxPool-8 has no attribute ceil_mode")]
    (line,) = failure_clusters(unchecked)["b"]
    assert line.signature == "fail: accepted an invalid model of domain org.openvinotoolkit" and len(line.details) == 4


def test_failures_that_share_a_first_line_are_split_by_the_runtime_s_own_diagnostic():
    """A compiler whose every exception opens with one sentence: the causes come from its error
    lines further down (paths and numbers normalised), warnings before them passed over."""
    from conformance.report.causes import failure_clusters

    def record(n, error_line):
        reason = ("CompilerError: Error invoking the model compiler tool\n"
                  "W0000 Unknown CPU vendor, using defaults\n"
                  f"/tmp/build-{n}/model.mlir:{n}:7: {error_line}\n  raised at /opt/x.py:12 in run")
        return {"backend": "c", "id": f"MaxPool-12/x{n}[float32]", "op": "MaxPool", "version": 12, "outcome": "error",
                "message": "CompilerError: Error invoking the model compiler tool", "reason": reason,
                "inputs": [{"name": "X", "shape": [1, 1, 4], "dtype": "float32"}], "case": f"x{n}"}

    items = [record(n, "error: failed to legalize operation 'stablehlo.reduce_window'") for n in range(3)]
    items += [record(n, "error: 'memref.alloc' op expected 3 dynamic sizes") for n in range(3, 5)]
    clusters = failure_clusters(items)["c"]
    assert [len(c.records) for c in clusters] == [3, 2]
    assert all("Error invoking the model compiler tool" in c.signature and "error:" in c.signature for c in clusters)
    assert "/tmp/build" not in clusters[0].signature and "Unknown CPU vendor" not in clusters[0].signature


def _clusters_of_a_run(pytester, backend: str, *selection: str) -> list:
    out = pytester.path / "out"
    pytester.runpytest(str(PACKAGE_DIR), f"--backend=tests.meta.support.faulty_backends:{backend}", "--isolation=none",
                       f"--report={out}", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning",
                       *selection)
    return failure_clusters(read_results(out / "results.json")["items"]).get(backend, [])


@pytest.mark.slow
def test_a_backend_whose_every_error_opens_with_one_line_is_split_by_its_diagnostics(pytester):
    clusters = _clusters_of_a_run(pytester, "OneFirstLineForEveryError", "-m", "version12 and maxpool", "-k", "pads or dilations")
    errors = [c for c in clusters if c.signature.startswith("error:")]
    assert len(errors) == 2, "\n".join(c.signature for c in clusters)
    assert {("padding" in c.signature, "dilated" in c.signature) for c in errors} == {(True, False), (False, True)}
    assert all("<path>" in c.signature and "Unknown CPU vendor" not in c.signature for c in errors)


@pytest.mark.slow
def test_undiagnosed_values_are_grouped_by_the_windows_their_wrong_elements_share(pytester):
    """A NaN maximum given as 0: the items no model reproduces (where every value is negative, the
    model of a running maximum that starts at 0 and passes NaN over does) are one line."""
    clusters = _clusters_of_a_run(pytester, "NaNMaximaAsZero", "-m", "version12 and maxpool", "-k", "nan and 2d")
    undiagnosed = [c for c in clusters if not c.diagnosed]
    # its name, and what an experiment measured on it where the run's budget allowed one
    assert [c.signature.split(": fails ")[0] for c in undiagnosed] == ["fail: Y values differ in windows holding NaN"], (
        [c.signature for c in clusters])
    assert len({r["case"] for r in undiagnosed[0].records}) > 3  # one line over many cases and shapes


def test_a_model_found_under_a_reading_joins_the_model_s_line():
    """The reading is which answer the documents allow that the runtime chose; the model is the bug."""
    plain = _record("Indices: 1 of 3 differ", "Indices: 1 of 3 differ", [], diagnosis=[written("indices_per_plane")])
    read = dict(_record("Indices: 2 of 5 differ", "Indices: 2 of 5 differ", [],
                        diagnosis=[written("indices_per_plane@same-pad-negative:negative-split-floor")]), id="MaxPool-12/y[float32]")
    (line,) = failure_clusters([plain, read])["b"]
    assert "(indices_per_plane)" in line.signature and "@" not in line.signature.split(";")[0]
    assert "1 of its items under a reading of an open question" in line.signature


def test_an_item_two_models_reproduce_joins_the_line_its_operator_version_s_items_are_on():
    """ort-js[ep=webgpu]: MaxPool-1 runs on the CPU provider (MLAS), MaxPool-8 on WebGPU; a 1-D item
    of MaxPool-1 that both kernels' models reproduce joins MLAS's line, though WebGPU's has more."""
    def record(version: int, n: int, diagnosis: list[str]) -> dict:
        return dict(_record("Y: 1 of 3 differ", "Y: 1 of 3 differ", [], diagnosis=[written(d) for d in diagnosis]), version=version,
                    id=f"MaxPool-{version}/x{n}[float32]")

    records = [record(8, n, ["nan_never_selected_seed_kept"]) for n in range(5)]
    records += [record(1, n, ["nan_compared_as_mlas_pools"]) for n in range(2)]
    records.append(record(1, 9, ["nan_never_selected_seed_kept", "nan_compared_as_mlas_pools"]))
    lines = {line.signature.rsplit("(", 1)[-1].split(")")[0]: {r["id"] for r in line.records}
             for line in failure_clusters(records)["b"]}
    assert "MaxPool-1/x9[float32]" in lines["nan_compared_as_mlas_pools"], lines


def test_c_integer_type_names_in_a_refusal_are_element_types():
    int8, uint8 = ({"id": f"MaxPool-12/x[{t}]", "op": "MaxPool", "backend": "b", "outcome": "error",
                    "message": f"RuntimeError: value cannot be converted to type {t}_t without overflow"} for t in ("int8", "uint8"))
    assert cause_signature(int8) == cause_signature(uint8)

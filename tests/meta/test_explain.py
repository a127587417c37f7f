"""Explanation by experiment (conformance/explain/): a bug no defect model describes gets one line,
named by the deciding conditions its probes measured on the backend, whatever lines the items
first fell on; a crash under one attribute's value is one line naming that value."""

from __future__ import annotations

import html
import json
from functools import cache

import pytest

from conformance.backends.isolation.in_process import InProcessBackend
from conformance.backends.isolation.runner import IsolatedBackend
from conformance.docgen.coverage import covering_sample
from conformance.explain.lines import explain_lines
from conformance.judge.verdict import evaluate
from conformance.load.cases import bundled_case_dir
from conformance.outcomes import FAILING_WORDS
from conformance.plugin import PACKAGE_DIR
from conformance.report.causes import failure_clusters
from conformance.report.record import item_record, with_verdict
from tests.meta.support import unlisted_bugs
from tests.meta.support.mutant_backend import REGISTRY
from tests.support.bundled import bundled_items

pytest_plugins = ["pytester"]

BUDGET_S = 240.0  # far more than a line takes: what is measured must not depend on this machine's speed


@cache
def ai_onnx_sample() -> list:
    """The covering sample's ai.onnx MaxPool items (about 370, valid and invalid): every path
    selector value at every version, as a vendor's first run."""
    items = bundled_items()
    chosen = covering_sample(items)
    return [i for i in items if i.id in chosen and i.case.domain == "ai.onnx" and i.case.op == "MaxPool"]


def explained(backend, runner) -> tuple[list[dict], dict]:
    """The sample's records on ``backend`` (run by ``runner``), its lines explained."""
    by_id = {item.id: item for item in ai_onnx_sample()}
    records = [with_verdict({**item_record(item, bundled_case_dir()), "backend": backend.name},
                            evaluate(item, runner, seed=0, registry=REGISTRY)) for item in by_id.values()]
    done = explain_lines(records, {backend.name: runner}, lambda r: by_id[r["id"]], REGISTRY, 0, BUDGET_S)
    return records, {e["probed"]: e for e in done.explanations}


def lines_of_valid_models(records: list[dict]):
    return [line for line in failure_clusters(records)[records[0]["backend"]]
            if all(r.get("expected") != "reject" for r in line.records)]


def deciding(explanation: dict) -> dict[str, dict]:
    return {d["factor"]: d for d in explanation["deciding"]}


@pytest.mark.parametrize("bug", ["DilatesTheFirstAxisOnly", "PadsBothEndsWithTheEndPadIn1D",
                                 "SkipsAnAxisWhoseOutputIsItsInputIn3D"])
def test_a_bug_outside_the_library_is_one_line_named_by_its_deciding_conditions(bug):
    backend = getattr(unlisted_bugs, bug)()
    records, explanations = explained(backend, InProcessBackend(backend))
    (line,) = lines_of_valid_models(records)  # every failing valid item, on one line
    assert {r["id"] for r in line.records} == {r["id"] for r in records if r["outcome"] in FAILING_WORDS
                                               and r.get("expected") != "reject"}
    assert "by experiment" in line.signature
    found = [explanations[r["explanation"]["probed"]] for r in line.records]
    told = max(found, key=lambda e: len(e["deciding"]))  # the experiment the line's name gives
    assert told["text"] in line.signature
    conditions = deciding(told)
    if bug == "DilatesTheFirstAxisOnly":
        # a dilation past the first axis decides; the first axis' own, and 1-D, pass
        assert any(f.startswith("dilations[") and f != "dilations[0]" for f in conditions), told["text"]
        assert "dilations[0]" not in conditions and "1-D" in conditions["rank"]["passes"], told["text"]
    elif bug == "PadsBothEndsWithTheEndPadIn1D":
        assert conditions["rank"]["fails"] == "the input is 1-D" and "2-D" in conditions["rank"]["passes"], told["text"]
        begin, end = map(int, conditions["pads on axis 0"]["fails"].rpartition("[")[2].rstrip("]").split(", "))
        assert begin != end, told["text"]  # asymmetric pads decide; symmetric ones pass
        assert any(p == f"[{max(begin, end)}, {max(begin, end)}]" for p in conditions["pads on axis 0"]["passes"])
    else:
        assert conditions["rank"]["fails"] == "the input is 3-D" and "2-D" in conditions["rank"]["passes"], told["text"]
        minimal = told["minimal"]
        kernel, shape = minimal["attributes"]["kernel_shape"], minimal["shape"][2:]
        pads = minimal["attributes"].get("pads", [0] * 6)
        # on some axis the window is more than one element and the output extent equals the input's
        assert any(k > 1 and n + pads[a] + pads[3 + a] - k + 1 == n for a, (k, n) in enumerate(zip(kernel, shape))), minimal
        assert any(f.startswith(("pads on axis", "kernel_shape[")) for f in conditions), told["text"]


def test_a_crash_under_one_attribute_value_is_one_line_naming_it():
    backend = unlisted_bugs.CrashesWhereStorageOrderIsColumnMajor()
    runner = IsolatedBackend(f"{unlisted_bugs.__name__}:{type(backend).__name__}", backend.name, "0", 30, None)
    try:
        records, explanations = explained(backend, runner)
    finally:
        runner.close()
    (line,) = lines_of_valid_models(records)
    assert line.signature.startswith("crash: ") and "SIGSEGV" in line.signature
    (explanation,) = {explanations[r["explanation"]["probed"]]["text"]: explanations[r["explanation"]["probed"]]
                      for r in line.records}.values()
    assert deciding(explanation)["storage_order"] == {"factor": "storage_order", "fails": "storage_order = 1",
                                                      "passes": ["storage_order left out"]}, explanation["text"]
    assert explanation["complete"] and explanation["text"] in line.signature
    assert set(explanation["free"]) >= {"element type", "N", "C"}  # measured: nothing else decides


PADS_AT_THE_BEGINNING = """\
op: MaxPool
cases:
  - name: pads_at_the_beginning
    description: a 1-D pool with a begin pad and none at the end
    provenance: {document: test, example: pads}
    versions: [12]
    attributes: {kernel_shape: [2], pads: [1, 0], strides: [2]}
    inputs:
      X: {dtype: float32, data: [[[1, 2, 3, 4, 5, 6]]]}
    outputs:
      Y: derived
"""


def test_a_run_explains_its_lines_in_a_child_process_and_changes_no_outcome(pytester):
    """The plugin's end of a run: probes in a child process even under --isolation=none (a probe
    that crashes must not cost the run its report), their results in results.json and the report,
    every outcome as without them; a budget of 0 turns them off."""
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "pads.yaml").write_text(PADS_AT_THE_BEGINNING)
    documents = {}
    for budget in ("0", "120"):
        pytester.runpytest(str(PACKAGE_DIR), "--cases", str(pytester.path / "cases"), "--isolation=none",
                           "--backend=tests.meta.support.unlisted_bugs:PadsBothEndsWithTheEndPadIn1D",
                           f"--conformance-explain-budget={budget}", f"--report={pytester.path / budget}",
                           "-W", "ignore::pytest.PytestAssertRewriteWarning")
        documents[budget] = json.loads((pytester.path / budget / "results.json").read_text())
    off, on = documents["0"], documents["120"]
    assert "explanations" not in off and not any("explanation" in r for r in off["items"])
    assert [(r["id"], r["outcome"]) for r in off["items"]] == [(r["id"], r["outcome"]) for r in on["items"]]
    (explanation,) = on["explanations"]
    assert explanation["complete"] and "the input is 1-D" in explanation["text"]
    assert all(r["explanation"]["text"] == explanation["text"] for r in on["items"] if r["outcome"] == "fail")
    assert html.escape(explanation["text"], quote=False) in (pytester.path / "120" / "report.html").read_text()

"""The export in the ONNX backend-test layout loads with onnx's own loader and runs under onnx's
own test runner; invalid models, ties and open questions stay out of the plainly judged tests."""

from __future__ import annotations

import json
import unittest
from collections import Counter

import pytest
from onnx.backend.test.loader import load_model_tests
from onnx.backend.test.runner import Runner

from conformance.cli import main
from conformance.expand.cache import expand_file
from conformance.load.cases import bundled_case_dir, case_files, load_registry
from conformance.load.limits import DEFAULT_LIMITS
from reference_backend import ReferenceBackend

pytestmark = pytest.mark.slow  # the slow tier (tests/conftest.py): its module fixture runs the whole suite



@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The whole bundled suite (about 25 s on two cores; onnx's Runner then takes about 30 s)."""
    target = tmp_path_factory.mktemp("export")
    assert main(["export", str(target)]) == 0
    return target


def test_every_bundled_item_is_exported_once_and_loads(exported):
    manifest = json.loads((exported / "manifest.json").read_text())
    ids = [t["id"] for t in manifest["tests"]]
    bundled = load_registry(bundled_case_dir())
    assert len(ids) == len(set(ids)) == sum(len(expand_file(f, bundled, DEFAULT_LIMITS))
                                            for f in case_files(bundled_case_dir()))
    kinds = Counter(t["kind"] for t in manifest["tests"])
    for kind, count in kinds.items():
        assert len(load_model_tests(data_dir=str(exported), kind=kind)) == count
    # OpenVINO's MaxPool with Indices is judged for ties in its own geometry (kernel, pads_begin...)
    openvino = {t["kind"] for t in manifest["tests"] if t["id"].startswith("org.openvinotoolkit.MaxPool-8/")}
    assert {"judged", "index_ties", "must_reject"} <= openvino


def test_each_kind_of_item_has_its_own_directory(exported):
    manifest = json.loads((exported / "manifest.json").read_text())
    kinds = {t["kind"] for t in manifest["tests"]}
    assert kinds == {"judged", "must_reject", "open_questions", "index_ties"}
    entry = next(t for t in manifest["tests"] if t["id"] == "MaxPool-12/2d_ceil[float32]")
    assert entry["test"] == "judged/test_MaxPool_12__2d_ceil__float32" and entry["expected"] == "literal"
    ties = next(t for t in manifest["tests"] if t["id"] == "MaxPool-12/ties/y_indices[float32]")
    assert ties["kind"] == "index_ties"
    reject = next(t for t in manifest["tests"] if t["kind"] == "must_reject")
    data = exported / reject["test"] / "test_data_set_0"
    assert (data / "input_0.pb").exists() and not list(data.glob("output_*.pb"))
    assert json.loads((exported / entry["test"] / "data.json").read_text()) == {"rtol": 0, "atol": 0}


def test_onnx_runs_the_judged_tests_with_its_own_loader_and_runner(exported):
    cases = load_model_tests(data_dir=str(exported), kind="judged")
    assert len(cases) > 7000
    runner = Runner(ReferenceBackend, __name__)
    runner.include(r"^test_([a-z_]+_)?(Nhwc)?Max(Pool|Unpool)_\d+__")  # the Runner also brings onnx's own node tests
    # Every 8th test, in the export's order (every operator, version and case class): that onnx's
    # loader and runner take the export's files is a property of their form, which the whole export
    # shares; the reference's verdicts on every item are the reference run's (.ci/run).
    cases = cases[::8]
    for case in cases:
        runner._add_model_test(case, "judged")  # what Runner does for its own data directories
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(cls)
                               for cls in runner.test_cases.values())
    outcome = unittest.TextTestRunner(verbosity=0, stream=open("/dev/null", "w")).run(suite)
    ran = outcome.testsRun - len(outcome.skipped)  # onnx adds a CUDA variant it skips on CPU
    assert ran >= len(cases) and not outcome.failures and not outcome.errors

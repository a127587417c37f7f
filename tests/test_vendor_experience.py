"""What a runtime vendor meets first: the plugin beside other pytest plugins, usage errors in one
line with pytest's exit code, expectations that say what they matched, a fast single-item rerun."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

pytest_plugins = ["pytester"]

ZERO_BACKEND = """\
import numpy as np
from onnx.backend.base import Backend, BackendRep


class ZeroRep(BackendRep):
    def run(self, inputs, **kwargs):
        return [np.zeros(inputs[0].shape[:2] + (1,) * (inputs[0].ndim - 2), dtype=inputs[0].dtype)]


class Zeros(Backend):
    '''Answers zeros of a plausible shape; writes down the device it is asked for.'''

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        with open("devices.txt", "a") as seen:
            seen.write(device + "\\n")
        return ZeroRep()

    @classmethod
    def supports_device(cls, device):
        return device in ("CPU", "CUDA")
"""


def run_suite(pytester, *args):
    # In-process runs re-import the already imported plugin, which pytest warns cannot be rewritten.
    return pytester.runpytest(str(PACKAGE_DIR), "-W", "ignore::pytest.PytestAssertRewriteWarning", *args)


def small_cases(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "small.yaml").write_text(SMALL_CASE)
    return pytester.path / "mine"


def zeros_and_cases(pytester):
    """The backend somepkg.zeros:Zeros importable, and the small cases' directory."""
    pytester.makepyfile(**{"somepkg/__init__": "", "somepkg/zeros": ZERO_BACKEND})
    pytester.syspathinsert()
    return small_cases(pytester)


def test_the_suite_runs_beside_pytest_timeout(pytester):
    pytest.importorskip("pytest_timeout")
    cases = small_cases(pytester)
    # A child process, as a user's run: every installed plugin loads from its entry point.
    result = pytester.runpytest_subprocess(str(PACKAGE_DIR), "-p", "timeout", "--timeout=120",
                                           "--conformance-timeout=30", "--cases", str(cases))
    assert result.ret == 0, result.stderr.str()
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["conformance backend: reference *timeout 30 s*", "timeout: 120.0s"])


def test_an_adapter_with_a_syntax_error_is_one_line_and_a_usage_error(pytester):
    pytester.makepyfile(broken_adapter="class Broken(:\n    pass\n")
    pytester.syspathinsert()
    result = run_suite(pytester, "--backend=broken_adapter:Broken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --backend=broken_adapter:Broken: cannot import backend 'broken_adapter:Broken': "
                                 "SyntaxError: * (broken_adapter.py, line 1)"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_missing_or_malformed_results_file_is_one_line_and_exit_2(command, tmp_path, capsys):
    from conformance.cli import main

    (tmp_path / "truncated.json").write_text('{"schema_version": 1, "items": [')
    (tmp_path / "other.json").write_text('{"name": "not a run"}')
    for bad, says in [("missing.json", "No such file or directory"), ("truncated.json", "not JSON"),
                      ("other.json", "not a results.json of the suite (the document: 'schema_version' is a required")]:
        extra = [str(tmp_path / bad)] if command == "compare" else ["-o", str(tmp_path / "out")]
        assert main([command, str(tmp_path / bad), *extra]) == 2  # 1 stays "regression found"
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and error.startswith(f"conformance {command}: {tmp_path / bad}: {says}")


def test_a_missing_expectations_path_is_a_usage_error(pytester):
    result = run_suite(pytester, "--expectations", str(pytester.path / "nowhere"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --expectations {pytester.path / 'nowhere'}: no such file or directory"])


def test_the_header_names_the_expectations_and_the_summary_their_stale_entries(pytester):
    cases = zeros_and_cases(pytester)
    listed = pytester.path / "expected"
    listed.mkdir()
    # An import path goes by its class's name: the file is Zeros.yaml, not somepkg.zeros:Zeros.yaml.
    (listed / "Zeros.yaml").write_text(
        "backend: somepkg.zeros:Zeros\nentries:\n"
        "  - {match: 'MaxPool-*/small[[]float32[]]', outcome: fail, reason: answers zeros}\n"
        "  - {match: 'MaxPool-*/renamed_case*', outcome: fail, reason: a case that is gone}\n")
    (listed / "Zeros.skips.yaml").write_text(
        "backend: Zeros\nentries:\n  - {match: MaxPool-1/*, reason: hangs at version 1}\n")
    result = run_suite(pytester, "--backend=somepkg.zeros:Zeros", "--cases", str(cases), "--expectations", str(listed),
                       "-rs", f"--report={pytester.path / 'out'}")
    assert result.ret == 0, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert (outcomes["xfail"], outcomes["skipped"]) == (5, 1)
    result.stdout.fnmatch_lines([
        f"conformance expectations of somepkg.zeros:Zeros: {listed}/Zeros.yaml (2 entries), "
        f"{listed}/Zeros.skips.yaml (1 entry)",
        "*conformance: stale expectations (they match no item)*",
        f"{listed}/Zeros.yaml:4: MaxPool-*/renamed_case*",
        f"SKIPPED*skipped: hangs at version 1 ({listed}/Zeros.skips.yaml:3)",
    ])
    report = json.loads((pytester.path / "out" / "results.json").read_text())
    assert next(r for r in report["items"] if r["version"] == 1)["outcome"] == "skipped"
    # under xdist the workers collect: the stale entries still reach the summary
    result = run_suite(pytester, "--backend=somepkg.zeros:Zeros", "--cases", str(cases), "--expectations", str(listed),
                       "-n", "2")
    result.stdout.fnmatch_lines(["*conformance: stale expectations*", f"{listed}/Zeros.yaml:4: MaxPool-*/renamed_case*"])


def test_a_directory_without_a_file_for_the_backend_says_so(pytester):
    (pytester.path / "empty").mkdir()
    result = run_suite(pytester, "--cases", str(small_cases(pytester)), "--expectations", str(pytester.path / "empty"))
    result.stdout.fnmatch_lines([f"conformance expectations of reference: none ({pytester.path / 'empty'}/reference.yaml not found)"])


def test_openvino_s_reason_survives_its_conversion_report():
    pytest.importorskip("openvino")
    from conformance.backends import load_backend
    from conformance.expand.items import expand
    from conformance.load.cases import bundled_case_dir, load_case_file, load_registry

    # A static empty batch fails in the frontend's conversion report, which reads
    # "MaxPool-1 with a message:" and gives the reason lines later.
    cases = load_case_file(bundled_case_dir() / "maxpool_edges.yaml", load_registry(bundled_case_dir()))
    item = next(i for c in cases if c.name.startswith("empty_batch") for i in expand(c)
                if i.id == "MaxPool-1/empty_batch/1d-y[float32]")
    with pytest.raises(RuntimeError) as info:
        load_backend("openvino").run(item.model, item.make_inputs(0))
    assert str(info.value).splitlines()[0] == "Batch size is zero."


def test_results_json_keeps_the_whole_reason_and_displays_cut_at_a_word(tmp_path):
    from conformance.judge.verdict import evaluate
    from conformance.report.results import shorten
    from tests.meta.support.faulty_backends import Faulty, is_valid_twin
    from tests.test_compare import bundled

    location = "pool_attributes.h:88 onnxruntime::PoolAttributes::PoolAttributes(" + "x" * 300 + ") was false. "

    class Refuses:
        name, version = "refuses", "1"

        def details(self):
            return {}

        def run(self, model, inputs):
            if is_valid_twin(model):  # it runs the minimal valid model: its refusal of the item is the error
                return Faulty.correct(self, model, inputs)
            raise RuntimeError(location + "Pad should be smaller than kernel.")

    verdict = evaluate(bundled("MaxPool", "2d_ceil", 12), Refuses(), 0, {})
    assert verdict.message.endswith("Pad should be smaller than kernel.")
    shown = shorten(verdict.message, 160)
    assert len(shown) <= 160 and shown.endswith("…") and shown[:-1] in verdict.message
    assert shorten("a short reason", 160) == "a short reason"


def test_an_onnx_backend_class_runs_on_the_device_named_in_brackets(pytester):
    cases = zeros_and_cases(pytester)
    result = run_suite(pytester, "--backend=somepkg.zeros:Zeros[device=CUDA]", "--cases", str(cases))
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(["conformance backend: somepkg.zeros:Zeros[[]device=CUDA[]] unknown (class somepkg.zeros.Zeros, device CUDA,*",
                                 "repro: PYTHONPATH=* pytest conformance '--backend=somepkg.zeros:Zeros[[]device=CUDA[]]' *"])
    assert (pytester.path / "devices.txt").read_text().split() == ["CUDA"] * 6
    for option, says in [("device=TPU", "supports_device('TPU') is False"),
                         ("threads=1", "is an onnx Backend class: its one option is device, not threads")]:
        refused = run_suite(pytester, f"--backend=somepkg.zeros:Zeros[{option}]", "--cases", str(cases))
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        refused.stderr.fnmatch_lines([f"ERROR: --backend=somepkg.zeros:Zeros[[]{option}[]]: *{says}"])


def test_last_failed_reruns_only_the_failures_and_markers_select(pytester):
    cases = zeros_and_cases(pytester)
    common = ["--backend=somepkg.zeros:Zeros", "--cases", str(cases), "-p", "cacheprovider",
              "-o", f"cache_dir={pytester.path / 'cache'}"]
    first = run_suite(pytester, *common, "-k", "MaxPool-1/ or MaxPool-8/")
    first.assert_outcomes(failed=2, deselected=4)
    again = run_suite(pytester, *common, "--lf")
    again.assert_outcomes(failed=2, deselected=4)
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 2 failures*"])
    first_failed = run_suite(pytester, *common, "--ff", "-v")
    first_failed.assert_outcomes(failed=6)
    first_failed.stdout.fnmatch_lines(["*MaxPool-1/small[[]float32[]] FAILED*", "*MaxPool-8/small[[]float32[]] FAILED*",
                                       "*MaxPool-10/small*"])
    selected = run_suite(pytester, *common, "--strict-markers", "-m", "maxpool and version22 and float32 and literal")
    selected.assert_outcomes(failed=1, deselected=5)
    assert run_suite(pytester, *common, "-m", "derived").parseoutcomes()["deselected"] == 6


def test_the_expansion_is_cached_by_content(pytester):
    cases = small_cases(pytester)
    common = ["--cases", str(cases), "-p", "cacheprovider", "-o", f"cache_dir={pytester.path / 'cache'}", "--co", "-q"]
    run_suite(pytester, *common).assert_outcomes()
    cached = list((pytester.path / "cache" / "d" / "conformance-items").glob("*.json"))
    assert len(cached) == 3  # small.yaml's items, their ids and the registry
    (cases / "small.yaml").write_text(SMALL_CASE.replace("name: small", "name: renamed"))
    result = run_suite(pytester, *common)
    result.stdout.fnmatch_lines(["*MaxPool-1/renamed[[]float32[]]"])
    assert "small[" not in result.stdout.str()
    again = list((pytester.path / "cache" / "d" / "conformance-items").glob("*.json"))
    assert len(again) == 3 and not set(again) & set(cached)  # new keys, the old entries gone


def _shape(value):
    """The keys of every mapping, nested; a list by its first element."""
    if isinstance(value, dict):
        return {key: _shape(v) for key, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value and isinstance(value[0], (dict, list)) else []
    return None


def test_the_readme_results_example_is_a_real_run_and_junit_holds_the_record_as_json(pytester):
    pytest.importorskip("onnxruntime")
    import onnx
    import onnxruntime

    readme = (PACKAGE_DIR.parent / "docs" / "reports.md").read_text()
    example = json.loads(readme.split("## results.json", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    result = run_suite(pytester, "--backend=ort", "-k", "MaxPool-12/2d_ceil[float32]", "--report", "out",
                       "--junitxml", "junit.xml")
    assert result.ret == 0
    real = json.loads((pytester.path / "out" / "results.json").read_text())
    assert _shape(example) == _shape(real)
    assert example["summary"] == real["summary"]
    assert {k: v for k, v in example["items"][0].items() if k != "duration_s"} == \
        {k: v for k, v in real["items"][0].items() if k != "duration_s"}
    assert (example["environment"]["backends"][0]["version"], example["environment"]["onnx"]) == \
        (onnxruntime.__version__, onnx.__version__), "docs/reports.md's example names other versions than this run's"

    junit = ElementTree.parse(pytester.path / "junit.xml")
    properties = [json.loads(p.get("value")) for p in junit.iter("property") if p.get("name") == "conformance"]
    assert {r["id"]: r["outcome"] for r in properties}["MaxPool-12/2d_ceil[float32]"] == "pass"


def test_the_ci_recipe_is_a_workflow_that_runs_the_readme_s_commands_and_uploads_the_report():
    import yaml

    from tests.test_vendor_guide import commands

    workflow = yaml.safe_load((PACKAGE_DIR.parent / "examples" / "github-actions" / "conformance.yml").read_text())
    assert workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as true
    steps = workflow["jobs"]["conformance"]["steps"]
    lines = [line.strip() for step in steps for line in step.get("run", "").splitlines() if line.strip()]
    suite = [line for line in lines if line.startswith(("pytest", "conformance"))]
    assert suite and set(suite) <= set(commands()), "the workflow runs a command the guide does not give"
    assert "--expectations" in suite[-1]
    report = suite[-1].split("--report ")[1].split()[0]
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["path"].rstrip("/") == report
    readme = (PACKAGE_DIR.parent / "README.md").read_text()
    assert "examples/github-actions/conformance.yml" in readme


def _record(backend, version, case, outcome, message, shape=(1, 1, 4), **attributes):
    item_id = f"MaxPool-{version}/{case}[float32]"
    return {"id": item_id, "case": case, "file": "cases/x.yaml", "line": 1, "op": "MaxPool", "domain": "ai.onnx",
            "version": version, "opset_imports": {"ai.onnx": version}, "attributes": attributes,
            "inputs": [{"name": "X", "shape": list(shape), "dtype": "float32"}], "expected": "derived",
            "ambiguity": [], "erratum": None, "backend": backend, "backend_version": "1", "outcome": outcome,
            "message": message, "repro": f"pytest conformance --backend={backend} -k '{item_id}'"}


def test_the_html_report_clusters_failures_by_cause_per_backend_with_links():
    import re

    from conformance.report.html import render_html

    # One backend fails 500 items for one cause (positions and counts vary) and 3 for another;
    # the other backend's 2 failures must still show.
    items = [_record("big", version, f"case{n}", "fail",
                     f"Y: {n % 7 + 1} of 40 elements differ; Y[0, 0, {n % 3}]: expected -inf (0xff800000), "
                     f"got -3.4028234663852886e+38 (0xff7fffff)", shape=(1, 1, 4 + n % 9), kernel_shape=[2])
             for n in range(100) for version in (1, 8, 10, 12, 22)]
    items += [_record("big", 22, f"refused{n}", "error", f"Fail: pool_attributes.h:{88 + n} Pad should be smaller "
                      "than kernel.", kernel_shape=[2], pads=[n, n]) for n in range(3)]
    items += [_record("small", 8, "only", "fail", "Y: shape [1, 1, 3], expected [1, 1, 2]"),
              _record("small", 22, "only", "pass", "")]
    document = {"schema_version": 2, "catalogue": {}, "partial": False, "interrupted": False, "started": "s", "finished": "f",
                "environment": {"backends": [{"name": n, "version": "1", "details": {}} for n in ("big", "small")],
                                "onnx": "1", "numpy": "1", "python": "3", "platform": "p", "seed": 0, "cases": "c",
                                "suite_version": "0"},
                "summary": {}, "collection_errors": [], "items": items}
    page = render_html(document)
    failures = page.split("<h2 id='failures'>", 1)[1].split("<h2", 1)[0]
    big, small = failures.split("id='failures-small'")
    assert "big: 503 failing items, 2 causes" in big and big.count("<details open id='cause-big-") == 2
    assert "500 fail" in big and "3 error" in big and "every item has kernel_shape=[2]" in big
    assert "MaxPool-1/case0[float32]" in big  # the smallest item of the largest cause
    assert "small: 1 failing item, 1 cause" in small and "MaxPool-8/only[float32]" in small
    by_version = re.findall(r"<tr id='failures-big-MaxPool-(\d+)'>", big)
    assert by_version == ["1", "8", "10", "12", "22"]  # numerically, not as text
    anchors = set(re.findall(r"id='([^']+)'", page))
    links = set(re.findall(r"href='#([^']+)'", page))
    assert links <= anchors, links - anchors
    assert "href='#failures-small-MaxPool-8'" in page and "href='#failures-big-MaxPool-22'" in page  # matrix counts
    assert "<nav aria-label='contents'>" in page


def test_a_backend_whose_runtime_is_missing_names_the_extra_that_installs_it():
    from conformance.backends.base import import_extra

    with pytest.raises(ImportError, match=r"^the tract backend needs numpy and no_such_runtime: "
                                          r"pip install 'maxpool-conformance\[tract\]'$"):
        import_extra("tract", "tract", "numpy", "no_such_runtime.onnx")


def test_a_backend_that_does_not_start_is_one_line(pytester):
    """A runtime whose release lacks an API the adapter calls (openvino 2023.0 has no Core at the
    top) is a usage error of one line, not pytest's INTERNALERROR."""
    pytester.makepyfile(oldruntime="class Old:\n    def __init__(self):\n        raise AttributeError(\"module 'rt' has no attribute 'Core'\")\n")
    pytester.syspathinsert()
    result = run_suite(pytester, "--backend=oldruntime:Old", "--cases", str(small_cases(pytester)))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --backend=oldruntime:Old: 'oldruntime:Old' does not start: AttributeError: module 'rt' has no attribute 'Core'"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_the_command_says_its_version_in_one_line(capsys):
    from conformance import __version__
    from conformance.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith(f"conformance {__version__} (python ") and out.count("\n") == 1


MIXED_BACKEND = """
import os

import numpy as np

from tests.meta.support.faulty_backends import Faulty


class FailsErrsAndCrashes(Faulty):
    def run(self, model, inputs):
        version = model.opset_import[0].version
        if version == 8:
            os._exit(3)
        if version == 22:
            raise RuntimeError("kernel exploded")
        outputs = self.correct(model, inputs)
        return [np.zeros_like(o) for o in outputs] if version in (11, 12) else outputs
"""


def test_junit_counts_failures_and_errors_as_the_terminal_does(pytester):
    """fail and xpass are JUnit failures; error, crash and timeout its errors; each item once."""
    pytester.makepyfile(mixed_backend=MIXED_BACKEND)
    pytester.syspathinsert()
    result = run_suite(pytester, "--cases", str(small_cases(pytester)), "--backend=mixed_backend:FailsErrsAndCrashes",
                       "--junitxml", "junit.xml")
    terminal = result.parseoutcomes()
    assert (terminal.get("failed"), terminal.get("errors"), terminal.get("crash")) == (2, 1, 1), terminal  # pytest's words
    suite = ElementTree.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert int(suite.get("failures")) == terminal.get("failed", 0) + terminal.get("xpass", 0)
    assert int(suite.get("errors")) == sum(terminal.get(o, 0) for o in ("errors", "crash", "timeout"))
    assert int(suite.get("tests")) == sum(terminal.values())
    errors = [e.get("message") for e in suite.iter("error")]
    assert sorted(m.split(":")[0] for m in errors) == ["crash", "error"], errors

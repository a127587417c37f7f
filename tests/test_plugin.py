"""The pytest plugin end to end: collection, outcomes, report header, results.json, repro lines."""

from __future__ import annotations

import json

import pytest
from _pytest.mark import KeywordMatcher  # pytest's own -k, to compare the plugin's selection with
from _pytest.mark.expression import Expression

from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

pytest_plugins = ["pytester"]


EXTERNAL_BACKEND = """\
import numpy as np
from onnx.backend.base import Backend, BackendRep


class ZeroRep(BackendRep):
    def __init__(self, model):
        self.model = model

    def run(self, inputs, **kwargs):
        shape = inputs[0].shape[:2] + (1,) * (inputs[0].ndim - 2)
        return [np.zeros(shape, dtype=inputs[0].dtype)]


class MyBackend(Backend):
    '''Defined outside the project; answers zeros of a plausible shape.'''

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        return ZeroRep(model)
"""


def run_suite(pytester, *args):
    # In-process runs re-import the already imported plugin, which pytest warns cannot be rewritten.
    return pytester.runpytest(str(PACKAGE_DIR), "-W", "ignore::pytest.PytestAssertRewriteWarning", *args)


@pytest.mark.slow
def test_the_reference_backend_is_green_and_the_report_holds_every_item(pytester):
    """On the covering sample (every case, every version with every type): .ci/run's own step runs
    the whole suite against the reference, green, and one whole-suite run is enough."""
    result = run_suite(pytester, "--backend=reference", "--conformance-sample", f"--report={pytester.path / 'out'}")
    assert result.ret == 0
    outcomes = result.parseoutcomes()
    assert set(outcomes) <= {"passed", "divergent"}, outcomes
    assert outcomes["passed"] > 90 and outcomes["divergent"] > 0
    result.stdout.fnmatch_lines(["conformance backend: reference 0.1.0 *", "*seed 0 (replay with --seed=0)*",
                                 "*conformance: items per op version*", "MaxPool-22 *"])
    report = json.loads((pytester.path / "out" / "results.json").read_text())
    assert [b["name"] for b in report["environment"]["backends"]] == ["reference"]
    assert {"onnx", "numpy", "seed", "cases"} <= set(report["environment"])
    assert len(report["items"]) == outcomes["passed"] + outcomes["divergent"]
    record = next(r for r in report["items"] if r["id"].startswith("MaxPool-") and r["id"].endswith("/2d_ceil[float32]"))
    version = record["version"]  # the sample holds every case at one version at least
    assert record["id"] == f"MaxPool-{version}/2d_ceil[float32]" and version >= 10  # ceil_mode since 10
    assert record == record | {
        "op": "MaxPool", "domain": "ai.onnx", "version": version, "opset_imports": {"ai.onnx": version},
        "attributes": {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
        "inputs": [{"name": "X", "shape": [1, 1, 4, 4], "dtype": "float32"}],
        "backend": "reference", "backend_version": "0.1.0", "outcome": "pass", "message": "",
        "expected": "literal",
    }


def test_cases_from_another_directory(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "small.yaml").write_text(SMALL_CASE)
    result = run_suite(pytester, "--cases", str(pytester.path / "mine"), "-v")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*small.yaml::MaxPool-1/small?float32? PASSED*"])


def test_an_external_onnx_backend_class_runs_and_its_failures_end_with_a_repro(pytester):
    pytester.makepyfile(**{"somepkg/__init__": "", "somepkg/mod": EXTERNAL_BACKEND})
    pytester.syspathinsert()
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "small.yaml").write_text(SMALL_CASE)
    result = run_suite(pytester, "--backend=somepkg.mod:MyBackend", "--cases", str(pytester.path / "mine"),
                       f"--report={pytester.path / 'out'}")
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines([
        "conformance backend: somepkg.mod:MyBackend unknown (class somepkg.mod.MyBackend, device CPU, isolation child process*",
        "MaxPool-12/small[[]float32[]]: a 2x2 kernel pools a 2x2 plane to one element",
        "case: */mine/small.yaml:3 (test: small)",
        "  Y[[]0, 0, 0, 0[]]: expected 4.0 (0x40800000), got 0.0 (0x00000000)",
        "repro: PYTHONPATH=* pytest conformance --backend=somepkg.mod:MyBackend --seed=0 --cases=*mine "
        "--conformance-id 'MaxPool-12/small[[]float32[]]'",
    ])
    rerun = run_suite(pytester, "--backend=somepkg.mod:MyBackend", "--cases", str(pytester.path / "mine"),
                      "--conformance-id", "MaxPool-12/small[float32]")
    rerun.assert_outcomes(failed=1)  # exactly the one item, and only it is built
    report = json.loads((pytester.path / "out" / "results.json").read_text())
    assert {r["outcome"] for r in report["items"]} == {"fail"}
    assert report["items"][0]["backend"] == "somepkg.mod:MyBackend"


@pytest.mark.parametrize(("word", "backends"), [
    ("MaxPool-12/infinities/1d-y[float32]", "--backend=reference"), ("maxpool-22/AUTO_PAD", "--backend=reference"),
    ("/1d-y[float32]", "--backend=reference"), ("MaxUnpool-11/", "--backend=reference"),
    ("MaxPool-12/2d_ceil[float32]", "--backend=reference,onnx-reference"),  # each item once per backend
    ("MaxPool-12/no-such-item", "--backend=reference")])
@pytest.mark.slow
def test_k_with_an_item_id_builds_only_the_items_pytest_would_select(pytester, word, backends):
    """-k <a word with "/"> (a pasted repro line) expands only the case files that hold such an
    item and builds only those items; the selection is the one pytest makes among all items
    (pytest's own matching over every item, built whole)."""
    result = run_suite(pytester, backends, "--co", "-q", "-k", word)
    selected = sorted(line for line in result.outlines if "::" in line)
    assert selected == pytest_s_selection(pytester, backends, word)
    if "no-such" not in word:
        assert selected


_KEYWORDS: dict[str, list[tuple[str, KeywordMatcher]]] = {}  # per set of backends: one whole build per worker


def pytest_s_selection(pytester, backends: str, expression: str) -> list[str]:
    """The items pytest's own -k selects among all the items, built whole (its deselect_by_keyword,
    which the plugin leaves any expression but one id-like word to)."""
    if backends not in _KEYWORDS:
        items, _ = pytester.inline_genitems(str(PACKAGE_DIR), "-W", "ignore::pytest.PytestAssertRewriteWarning", backends)
        _KEYWORDS[backends] = [(item.nodeid, KeywordMatcher.from_item(item)) for item in items]
    compiled = Expression.compile(expression)
    return sorted(nodeid for nodeid, matcher in _KEYWORDS[backends] if compiled.evaluate(matcher))


def test_k_with_an_at_is_a_one_line_usage_error_before_any_item_is_built(pytester):
    """pytest's -k grammar has no "@" (a pasted ``ID@backend``): said at once, with the option that takes it."""
    result = run_suite(pytester, "--backend=reference,onnx-reference", "-k", "MaxPool-12/2d_ceil[float32]@onnx-reference")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*-k *cannot hold '@'; for one backend's item, give --conformance-id 'ID@backend'"])
    assert "collected" not in result.stdout.str()


def test_the_suite_runs_without_pytest_xdist(pytester):
    """-p no:xdist: the plugin's hooks of xdist's are optional, not unknown hooks."""
    result = run_suite(pytester, "--backend=reference", "-p", "no:xdist", "-k", "MaxPool-12/2d_ceil[float32]")
    result.assert_outcomes(passed=2)  # ai.onnx's, and com.ms.internal.nhwc's whose name holds it


def test_an_unknown_backend_is_a_usage_error_that_lists_the_registered_ones(pytester):
    result = run_suite(pytester, "--backend=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--backend=nope: no backend named 'nope'*registered: onnx-reference, onnx2torch, "
                                 "openvino, ort, ort-js, reference, tinygrad, tract*"])


def test_a_broken_case_file_is_reported_in_one_line_and_the_others_run(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "broken.yaml").write_text(SMALL_CASE.replace("kernel_shape: [2, 2]", "kernel_shape: 2"))
    (pytester.path / "mine" / "good.yaml").write_text(SMALL_CASE)
    result = run_suite(pytester, "--cases", str(pytester.path / "mine"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=6, errors=1)
    result.stdout.fnmatch_lines(["*/mine/broken.yaml:6: cases[[]0[]].attributes.kernel_shape: must be ints, not int"])
    assert "Traceback" not in result.stdout.str()


def test_other_pytest_runs_are_left_alone(pytester):
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest("test_plain.py")
    result.assert_outcomes(passed=1)
    assert "conformance backend" not in result.stdout.str()


def test_the_suite_runs_under_xdist(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "small.yaml").write_text(SMALL_CASE)
    result = run_suite(pytester, "-n", "2", "--cases", str(pytester.path / "mine"), f"--report={pytester.path / 'out'}")
    result.assert_outcomes(passed=6)
    assert len(json.loads((pytester.path / "out" / "results.json").read_text())["items"]) == 6



def test_a_broken_registry_is_reported_in_one_line(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "small.yaml").write_text(SMALL_CASE)
    (pytester.path / "mine" / "ambiguities.yaml").write_text("odd:\n  title: t\n")
    result = run_suite(pytester, "--cases", str(pytester.path / "mine"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*/mine/ambiguities.yaml:1: odd: 'status' is required"])
    assert "Traceback" not in result.stdout.str()


def test_the_failures_are_shown_whole_and_pytest_scans_no_report_without_output_for_them(pytester):
    """pytest looks for each failure's teardown output among all the run's passed setup and
    teardown reports (quadratic over a whole run); the suite leaves those without output out first."""
    pytester.makepyfile(unshown_probe="""
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_terminal_summary(terminalreporter):
            terminalreporter.write_line(f"reports scanned for teardown output: {len(terminalreporter.stats.get('', []))}")
    """)
    pytester.syspathinsert()
    result = run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", "--isolation=none",
                       "-p", "unshown_probe", "-k", "MaxPool-12/ranks")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*= FAILURES =*", "*_ MaxPool-12/ranks/*", "*expected*", "*repro: *pytest conformance*",
                                 "reports scanned for teardown output: 0"])


def test_pytest_rewrites_none_of_the_suite_s_modules_in_the_processes_it_starts(pytester, monkeypatch):
    # pytest marks a plugin's packages for assertion rewriting; where bytecode is not written, every
    # pytest process (each xdist worker too) would rewrite the suite's modules again, 0.2 to 0.5 s of CPU.
    pytester.makepyfile(test_loaders="""
        import sys

        import conformance.judge.verdict, conformance.plugin, reference_backend

        def test_loaders():
            rewritten = sorted(name for name, module in sys.modules.items()
                               if name.partition(".")[0] in ("conformance", "reference_backend")
                               and type(getattr(module, "__loader__", None)).__name__ == "AssertionRewritingHook")
            assert rewritten == ["conformance", "conformance.pytest_entry"], rewritten  # the entry point unmarks the rest
    """)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_DIR.parent))  # on sys.path, as an installed wheel is
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-3000:]


def test_the_entry_point_exports_every_hook_of_the_plugin():
    """pytest loads the hooks of conformance.pytest_entry only: a hook added to the plugin's
    package and not re-exported there would never run, and nothing would say so."""
    import conformance.plugin as plugin
    import conformance.pytest_entry as entry

    hooks = {name for name in vars(plugin) if name.startswith("pytest_")}
    assert hooks and hooks == {name for name in vars(entry) if name.startswith("pytest_")}

"""The surfaces beyond the case files that a hostile runtime, cache or report directory can reach:
a backend's words are inert wherever they are shown, totals are bounded, a planted link does not
carry the repro scripts out of the report directory, ort-js's npm tree runs only as its setup
recorded it, and a failed setup says npm's own error."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conformance.backends import ort_js_setup
from conformance.cli import main
from conformance.judge.verdict import Verdict
from conformance.load.cases import inert
from conformance.outcomes import Outcome
from conformance.report import results as results_module
from conformance.report.results import ResultsError, load, render_markdown
from tests.test_ort_js_backend import fake_program

pytest_plugins = ["pytester"]

HOSTILE = "\x1b[2J\x1b]0;pwned\x07boom\x9b31m \u202eevil\u202c <script>alert(1)</script><img src=x onerror=alert(2)>"


def test_a_backend_s_words_reach_a_verdict_inert():
    verdict = Verdict(Outcome.ERROR, f"RuntimeError: {HOSTILE}", f"line one\n\t{HOSTILE}")
    for text in (verdict.message, verdict.details):
        assert not any(c in text for c in "\x1b\x07\x9b\u202e\u202c")
    assert verdict.details.startswith("line one\n\t") and "boom" in verdict.message


def test_inert_keeps_printable_text_whole():
    assert inert("plain text, é ü → ∞") == "plain text, é ü → ∞"


def test_summary_md_escapes_html_from_a_backend(two_backend_results):
    document = two_backend_results
    failing = next(r for r in document["items"] if r["outcome"] == "fail")
    failing.update(outcome="error", message=f"RuntimeError: {HOSTILE}")  # an error's cause line is its words
    failing.pop("diff")
    text = render_markdown(document)
    assert "<script>" not in text and "<img" not in text and "&lt;script&gt;" in text
    assert "\x1b" not in text and "\u202e" not in text


@pytest.fixture
def two_backend_report(pytester):
    from tests.test_reports import run_suite

    run_suite(pytester, "--backend=reference,tests.meta.support.faulty_backends:WrongAtVersion12", f"--report={pytester.path / 'out'}")
    return pytester.path / "out" / "results.json"


@pytest.fixture
def two_backend_results(two_backend_report):
    return json.loads(two_backend_report.read_text())


def test_report_bounds_the_total_of_its_inputs(two_backend_report, tmp_path, monkeypatch, capsys):
    results = two_backend_report
    bound = 3 * results.stat().st_size
    monkeypatch.setattr(results_module, "MAX_RESULTS_BYTES", bound)
    load([results] * 3)
    with pytest.raises(ResultsError, match=f"over {bound:,} bytes in all"):
        load([results] * 40)  # each alone is within the bound, all together are not
    assert main(["report", *[str(results)] * 40, "-o", str(tmp_path / "out")]) == 2
    out = capsys.readouterr()
    assert len((out.out + out.err).strip().splitlines()) == 1


def test_a_link_planted_as_the_repro_directory_is_not_followed(pytester, tmp_path):
    from tests.test_reports import run_suite

    out, outside = pytester.path / "out", tmp_path / "outside"
    outside.mkdir()
    out.mkdir()
    (out / "repro").symlink_to(outside)
    run_suite(pytester, "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", f"--report={out}")
    assert not list(outside.iterdir())
    assert (out / "repro").is_dir() and not (out / "repro").is_symlink() and list((out / "repro").iterdir())


# --- ort-js's npm tree ---


def _installed_tree(root):
    """A tree that passes for the pinned install: its lock file and two package.json files."""
    root.mkdir(parents=True)
    shutil.copyfile(ort_js_setup.LOCK_DIRECTORY / "package-lock.json", root.parent / "package-lock.json")
    for package in ("onnxruntime-node", "onnxruntime-web"):
        (root / package / "dist").mkdir(parents=True)
        (root / package / "package.json").write_text(json.dumps({"version": "1.0.0"}))
        (root / package / "dist" / "index.js").write_text("module.exports = {};\n")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = ort_js_setup.node_modules()
    _installed_tree(root)
    return root


def test_a_tree_without_a_record_of_its_setup_runs_nothing(tree):
    assert "run `conformance setup ort-js --force`" in ort_js_setup.cache_problem()
    ort_js_setup.record_manifest()
    assert ort_js_setup.cache_problem() is None


@pytest.mark.parametrize("how", ["script planted in dist", "file added", "file removed", "file swapped for a link"])
def test_a_tree_changed_since_setup_runs_nothing(tree, how):
    ort_js_setup.record_manifest()
    index = tree / "onnxruntime-node" / "dist" / "index.js"
    if how == "script planted in dist":
        stat = index.stat()
        index.write_text("require('child_process').execSync('touch /tmp/pwned');\n")
        os.utime(index, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same times: its content still tells
    elif how == "file added":
        (tree / "onnxruntime-node" / "dist" / "extra.js").write_text("")
    elif how == "file removed":
        index.unlink()
    else:
        index.unlink()
        index.symlink_to("/etc/passwd")
    problem = ort_js_setup.cache_problem()
    assert problem is not None and problem.endswith("run `conformance setup ort-js --force`"), problem


@pytest.mark.parametrize("how", ["fifo", "link to /dev/zero"])
def test_a_package_json_that_is_no_file_is_refused_at_once(tree, how):
    target = tree / "onnxruntime-web" / "package.json"
    target.unlink()
    os.mkfifo(target) if how == "fifo" else target.symlink_to("/dev/zero")
    assert "not installed" in ort_js_setup.cache_problem()
    with pytest.raises(ValueError, match="not a package.json"):
        ort_js_setup.package_json("onnxruntime-web")


def test_a_failed_setup_shows_npm_s_own_error_not_its_log_file(tmp_path, monkeypatch, capsys):
    fake_program(tmp_path, "node", "echo v20.1.0")
    fake_program(tmp_path, "npm", "printf 'npm error code E404\\nnpm error 404 Not Found - GET onnxruntime-node\\n"
                                  "npm error A complete log of this run can be found in: /root/.npm/_logs/x.log\\n' >&2; "
                                  "exit 1")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["setup", "ort-js"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.rstrip().endswith("npm error 404 Not Found - GET onnxruntime-node"), out


def test_report_html_and_the_scoreboard_escape_html_from_a_backend(two_backend_results, tmp_path):
    """The pages are autoescaped templates (report/templating.py): a backend's words, a file's
    name, a collection error and an experiment's text are text on the page, never markup."""
    from conformance.report.html import render_html
    from conformance.report.scoreboard import write_scoreboard

    document = two_backend_results
    failing = [r for r in document["items"] if r["outcome"] == "fail"]
    failing[0].update(outcome="error", message=f"RuntimeError: {HOSTILE}", reason=HOSTILE)
    failing[0].pop("diff")
    for r in failing[1:]:
        r["explanation"] = {"key": HOSTILE, "text": HOSTILE, "probed": r["id"]}
    document["collection_errors"] = [{"node": HOSTILE, "message": HOSTILE}]
    page = render_html(document)
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;alert(1)" in page
    runs = []
    for release in ("1.0.0", "2.0.0"):
        run = tmp_path / f"{release}.json"
        for b in document["environment"]["backends"]:
            b["version"] = release
        run.write_text(json.dumps(document))
        runs.append(run)
    board = write_scoreboard(runs, tmp_path / "board").read_text()
    # a cause's line is the runtime's words made generic ("alert(…)"), escaped as any text
    assert "<script>" not in board and "<img" not in board and "&lt;script&gt;" in board

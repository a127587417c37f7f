"""--report: a path that cannot hold a report is a usage error before the first item, in one line;
a disk that fills up costs the report, in one line, with no temporary file left; two runs never
write one directory at once."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import atomic
from conformance.plugin import PACKAGE_DIR
from conformance.report import writer as report
from conformance.report.writer import ReportDirectory, ReportError, Results, write_reports
from tests.support.samples import SMALL_CASE

ROOT = PACKAGE_DIR.parent


def command(tmp_path: Path, report_dir: str, *args: str) -> list[str]:
    (tmp_path / "cases").mkdir(exist_ok=True)
    (tmp_path / "cases" / "small.yaml").write_text(SMALL_CASE)
    return [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-q", "-p", "no:cacheprovider",
            f"--cases={tmp_path / 'cases'}", f"--report={report_dir}", "--isolation=none", *args]


def run(tmp_path: Path, report_dir: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(command(tmp_path, report_dir, *args), cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A small tmpfs mounted at ``path`` (root only; skipped where mounting is not allowed)."""
    path.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def assert_one_line_usage_error(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and words in errors[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr and "passed" not in result.stdout


def test_a_report_path_that_is_a_file_is_a_usage_error_before_the_first_item(tmp_path):
    (tmp_path / "taken").write_text("a file")
    result = run(tmp_path, "taken")
    assert_one_line_usage_error(result, "ERROR: --report taken: exists and is not a directory")


def test_a_report_path_below_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "taken").write_text("a file")
    assert_one_line_usage_error(run(tmp_path, "taken/out"), "--report taken/out: cannot create it: Not a directory")


def test_an_unwritable_report_directory_is_a_usage_error(tmp_path):
    with tmpfs(tmp_path / "readonly", "ro,size=64k"):
        result = run(tmp_path, "readonly")
    assert_one_line_usage_error(result, "--report readonly: cannot write")
    assert "Read-only file system" in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a directory whatever its mode")
def test_a_report_directory_without_write_permission_is_a_usage_error(tmp_path):
    (tmp_path / "locked").mkdir(mode=0o555)
    assert_one_line_usage_error(run(tmp_path, "locked"), "Permission denied")


def test_a_full_disk_costs_the_report_in_one_line_and_leaves_no_temporary_file(tmp_path):
    with tmpfs(tmp_path / "small", "size=12k"):
        (tmp_path / "small" / "filler").write_bytes(b"x" * 4096)  # room for the journal and the first write only
        result = run(tmp_path, "small")
        left = sorted(p.name for p in (tmp_path / "small").iterdir())
    assert result.returncode == pytest.ExitCode.INTERNAL_ERROR, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr and "INTERNALERROR" not in result.stdout
    assert "conformance: cannot write " in result.stdout and "No space left on device" in result.stdout
    assert not [name for name in left if name.endswith(".tmp")], left


def test_a_write_that_fails_midway_removes_its_temporary_file(tmp_path, monkeypatch):
    """The full disk of the test above, simulated (where no tmpfs can be mounted)."""
    directory = ReportDirectory.claim(tmp_path / "out")
    results = Results({"backends": []}, directory)
    results.write(partial=True)
    real = open

    def filling(*args, **kwargs):
        handle = real(*args, **kwargs)

        def write(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        handle.write = write
        return handle

    monkeypatch.setattr(atomic, "open", filling, raising=False)  # the module's own name, not the builtin
    with pytest.raises(ReportError, match=r"^cannot write .*results.json: No space left on device$"):
        write_reports(results, partial=False, interrupted=False)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.journal.jsonl", "results.json"]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["partial"]  # the last good one stays, and
    # the journal, which holds every record
    directory.release()


def test_a_second_run_into_the_same_directory_is_refused(tmp_path):
    # the first run holds the report until the second has ended: its items wait for the go
    go = tmp_path / "go"
    first = subprocess.Popen(command(tmp_path, "out", "--backend=tests.meta.support.faulty_backends:WaitsForTheGo"),
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "CONFORMANCE_GO": str(go)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "out" / "results.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = run(tmp_path, "out")
    finally:
        go.touch()
        first.wait(timeout=300)
    assert_one_line_usage_error(second, "--report out: another run is writing a report there")
    assert first.returncode == 0 and not json.loads((tmp_path / "out" / "results.json").read_text())["partial"]


def test_a_report_clusters_its_failures_once(tmp_path, monkeypatch):
    """The HTML, the Markdown and the repro scripts show one set of lines: clustered once, not once
    per renderer (a run of thousands of failures paid for it three times)."""
    from conformance.backends import load_backend
    from conformance.report import causes, html, known, results as results_model

    calls = []
    real = causes.failure_clusters
    counting = lambda items, *rest: calls.append(len(items)) or real(items, *rest)  # noqa: E731 - a spy
    for module in (causes, results_model, html, known):
        monkeypatch.setattr(module, "failure_clusters", counting)
    directory = ReportDirectory.claim(tmp_path / "out")
    backend = load_backend("reference")
    results = Results(report.environment([(backend, backend)], 0, PACKAGE_DIR / "cases"), directory)
    for n in range(3):
        results.add({"id": f"MaxPool-12/c{n}[float32]", "backend": "reference", "op": "MaxPool", "version": 12,
                     "outcome": "fail", "message": "Y: 1 of 4 elements differ", "expected": "derived",
                     "attributes": {"kernel_shape": [2]}, "inputs": [{"name": "X", "shape": [1, 1, 4], "dtype": "float32"}]})
    write_reports(results, partial=False, interrupted=False, values_of=lambda item: None)
    directory.release()
    assert calls == [3]
    assert "Failures (3)" in (tmp_path / "out" / "report.html").read_text()

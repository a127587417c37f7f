"""--conformance-rerun-crashes: a crashed item runs again in a fresh process; a crash that does not
recur is still a crash, "in 1 of 2 runs", marked flaky in results.json; one every run meets says so;
an expectations entry with `flaky: true` takes such an item as xfail, and its pass as no xpass."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

ROOT = PACKAGE_DIR.parent


def run(tmp_path, backend, *args):
    cases = tmp_path / "cases"
    cases.mkdir(exist_ok=True)
    (cases / "small.yaml").write_text(SMALL_CASE)
    command = [sys.executable, "-m", "pytest", "conformance", "--cases", str(cases), f"--backend={backend}", "-q",
               "-p", "no:cacheprovider", "-k", "MaxPool-12/", f"--report={tmp_path / 'out'}", *args]
    env = {**os.environ, "FAULTY_MARKER": str(tmp_path / "crashed-once")}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    (record,) = json.loads((tmp_path / "out" / "results.json").read_text())["items"]
    return done, record


def test_a_crash_that_does_not_recur_is_a_flaky_crash(tmp_path):
    done, record = run(tmp_path, "tests.meta.support.faulty_backends:CrashesOnTheFirstItemOnly", "--conformance-rerun-crashes=2")
    assert done.returncode == 1 and record["outcome"] == "crash" and record["flaky"] is True
    assert "(in 1 of 2 runs: not deterministic)" in record["message"]


def test_a_crash_every_run_meets_says_so(tmp_path):
    done, record = run(tmp_path, "tests.meta.support.faulty_backends:Segfaults", "--conformance-rerun-crashes=1")
    assert record["outcome"] == "crash" and "flaky" not in record and "(in each of 2 runs)" in record["message"]


def test_without_reruns_a_crash_is_judged_once(tmp_path):
    done, record = run(tmp_path, "tests.meta.support.faulty_backends:CrashesOnTheFirstItemOnly")
    assert record["outcome"] == "crash" and "runs" not in record["message"]


def test_a_flaky_listing_takes_the_crash_as_xfail_and_a_pass_as_no_xpass(tmp_path):
    listed = tmp_path / "expected.yaml"
    listed.write_text("backend: CrashesOnTheFirstItemOnly\nentries:\n"
                      "  - {match: 'MaxPool-12/small*', outcome: crash, flaky: true, reason: a rare abort}\n")
    done, record = run(tmp_path, "tests.meta.support.faulty_backends:CrashesOnTheFirstItemOnly", "--conformance-rerun-crashes=1",
                       f"--expectations={listed}")
    assert done.returncode == 0 and record["outcome"] == "xfail", done.stdout
    done, record = run(tmp_path, "tests.meta.support.faulty_backends:CrashesOnTheFirstItemOnly", f"--expectations={listed}")
    assert done.returncode == 0 and record["outcome"] == "pass", done.stdout  # the marker is there: no crash now


def test_a_drafted_expectations_file_goes_where_the_run_finds_it(tmp_path, capsys):
    """`conformance expectations --into DIR` names the file as a run with --expectations DIR looks for
    it: for a module:Class backend, its class name."""
    from conformance.cli import main
    from conformance.judge.expectations import load_expectations

    done, record = run(tmp_path, "tests.meta.support.faulty_backends:Segfaults")
    assert record["outcome"] == "crash"
    assert main(["expectations", str(tmp_path / "out" / "results.json"), "--into", str(tmp_path / "listed")]) == 0
    assert (tmp_path / "listed" / "Segfaults.yaml").is_file()
    found = load_expectations(tmp_path / "listed", "Segfaults", "tests.meta.support.faulty_backends:Segfaults")
    assert found is not None and found.find(record["id"]) is not None


def test_an_entry_whose_items_are_all_unsupported_now_is_stale():
    from conformance.judge.expectations import Expectations

    def record(outcome, where):
        return {"outcome": outcome, "expectation": {"where": where, "match": f"m{where}"}}

    records = [record("unsupported", "f:1"), record("unsupported", "f:1"), record("unsupported", "f:2"),
               record("xfail", "f:2"), record("xfail", "f:3")]
    assert Expectations.unsupported_entries(records) == {"f:1": "mf:1"}

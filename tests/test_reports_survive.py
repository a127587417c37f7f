"""An interrupted or killed run leaves a valid report that says it is partial; a run replays
exactly from its seed."""

from __future__ import annotations

import pytest
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema

from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE, ctrl_c_restored

ROOT = PACKAGE_DIR.parent


def start(tmp_path: Path, *args: str, cached: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-q",
         *(("-o", f"cache_dir={tmp_path / 'cache'}") if cached else ("-p", "no:cacheprovider")),
         f"--report={tmp_path / 'out'}", *args],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=ctrl_c_restored,  # a run started in the background inherits Ctrl-C ignored
    )


def start_a_long_run(tmp_path: Path) -> subprocess.Popen:
    """4,250 items of 50 ms (tests.meta.support.faulty_backends:Slow): still going long after its first partial
    report, and collected in a second where the whole suite takes four."""
    (tmp_path / "cases").mkdir()
    shutil.copy(ROOT / "cases" / "maxpool_edges.yaml", tmp_path / "cases")
    return start(tmp_path, "--backend=tests.meta.support.faulty_backends:Slow", "--isolation=none", "--cases", str(tmp_path / "cases"))


def report(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "results.json").read_text())


def wait_for_journalled_items(tmp_path: Path, timeout_s: float = 120) -> None:
    """Until the run's journal holds records (results.json is written at the end only)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        path = tmp_path / "out" / "results.journal.jsonl"
        if path.exists() and path.read_text().count("\n") > 1:
            return
        time.sleep(0.2)
    raise AssertionError("no record reached the journal")


def test_ctrl_c_leaves_a_partial_report_marked_interrupted(tmp_path):
    run = start_a_long_run(tmp_path)
    wait_for_journalled_items(tmp_path)
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 2  # pytest's "interrupted"
    written = report(tmp_path)
    assert written["partial"] and written["interrupted"] and written["finished"] is None
    assert 0 < len(written["items"]) < 4000


def test_a_killed_run_leaves_a_valid_partial_report_and_a_journal_of_its_items(tmp_path):
    from conformance.report.results import read_results

    run = start_a_long_run(tmp_path)
    wait_for_journalled_items(tmp_path)
    run.kill()
    run.wait(timeout=60)
    written = report(tmp_path)  # valid JSON: it is only ever replaced whole
    assert written["partial"] and not written["interrupted"]
    journalled = read_results(tmp_path / "out" / "results.journal.jsonl")  # what `conformance report` reads
    assert journalled["partial"] and journalled["items"] and len(journalled["items"]) < 4250


def test_a_worker_that_dies_costs_its_item_and_the_run_goes_on(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "small.yaml").write_text(SMALL_CASE)
    run = start(tmp_path, "--backend=tests.meta.support.faulty_backends:KillsItsProcessAtVersion22", "--isolation=none",
                "-n", "2", "--cases", str(tmp_path / "cases"))
    assert run.wait(timeout=300) == 1
    outcomes = {r["id"]: r["outcome"] for r in report(tmp_path)["items"]}
    assert outcomes.pop("MaxPool-22/small[float32]") == "crash"
    assert set(outcomes.values()) == {"pass"} and len(outcomes) == 5
    assert not report(tmp_path)["partial"]


def test_a_run_killed_before_collection_ends_leaves_a_report_and_not_an_older_one(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.json").write_text('{"an older": "run"}')
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "small.yaml").write_text(SMALL_CASE)
    run = start(tmp_path, "--backend=tests.meta.support.faulty_backends:Slow", "-n", "2", "--cases", str(tmp_path / "cases"))
    deadline = time.monotonic() + 120
    while "schema_version" not in (tmp_path / "out" / "results.json").read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    run.kill()  # the workers are still starting: nothing is collected yet
    run.wait(timeout=60)
    written = report(tmp_path)
    jsonschema.validate(written, json.loads((PACKAGE_DIR / "schema" / "results.schema.json").read_text()))
    assert written["partial"] and written["items"] == []


# Wall-clock facts: when the run started and ended, how long each item and each line's experiment took.
CLOCK = re.compile(r'"(started|finished|duration_s|seconds)": ("[^"]*"|[0-9.e-]+)')


@pytest.mark.slow
def test_the_same_seed_gives_byte_identical_results_with_and_without_workers(tmp_path):
    """Everything but the clock: items, their order, messages, diffs, and the order of every key."""
    (tmp_path / "cases").mkdir()
    for name in ("maxpool.yaml", "maxunpool.yaml", "maxpool_open_questions.yaml"):  # literal, random, divergent
        shutil.copy(ROOT / "cases" / name, tmp_path / "cases")
    texts = []
    # the last run reads the items' oracles (judge.oracle) that the one before kept in pytest's cache
    for workers, cached in (("0", False), ("2", True), ("2", True)):
        (tmp_path / workers).mkdir(exist_ok=True)
        # a budget of explanation no run spends: what its experiments measure then depends on the seed alone
        run = start(tmp_path / workers, "--seed=7", "-n", workers, "--cases", str(tmp_path / "cases"),
                    "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", "--conformance-explain-budget=600",
                    cached=cached)
        assert run.wait(timeout=600) == 1
        texts.append(CLOCK.sub(r'"\1": null', (tmp_path / workers / "out" / "results.json").read_text()))
    document = json.loads(texts[0])
    assert document["environment"]["seed"] == 7 and len(document["items"]) > 100
    assert {"pass", "fail", "divergent"} <= set(document["summary"])
    assert list((tmp_path / "2").glob("cache/d/conformance-items/*-values-*-7-*.json"))
    assert texts[0] == texts[1] == texts[2]

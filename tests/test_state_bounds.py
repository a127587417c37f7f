"""Issue 49's findings that concern options and names read back: every option parsed strictly with
an upper bound, names from untrusted files never turned into paths as they are, one results file
never counted twice, and the user's cache key and directories their own."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conformance.__main__ import main
from conformance.expand import cache
from conformance.load.user_dirs import base_directory
from conformance.plugin.session import MAX_RERUNS, reruns_of, shard_of


@pytest.mark.parametrize("text", ["1/²", "²/2", "1/" + "9" * 5000, "0/3", "4/3", "1/3/4", "-1/2", "1/1000000"])
def test_a_shard_that_is_not_i_of_n_is_a_one_line_usage_error(text):
    with pytest.raises(pytest.UsageError) as info:
        shard_of(text)
    assert "\n" not in str(info.value) and len(str(info.value)) < 200


def test_a_shard_within_its_bounds_is_read():
    assert shard_of("2/4") == (1, 4) and shard_of("100000/100000") == (99999, 100000)


def test_reruns_of_crashes_are_bounded():
    assert reruns_of(MAX_RERUNS) == MAX_RERUNS
    for count in (MAX_RERUNS + 1, -1, 10**9):
        with pytest.raises(pytest.UsageError):
            reruns_of(count)


def small_run(tmp_path, backend_name: str):
    """A results.json of one item, its backend named ``backend_name`` (anyone may write one)."""
    from conformance.backends import load_backend
    from conformance.judge.verdict import evaluate
    from conformance.load.cases import bundled_case_dir
    from conformance.report.record import item_record, with_verdict
    from conformance.report.writer import Results, environment
    from tests.support.bundled import bundled_items, bundled_registry

    item = next(i for i in bundled_items() if i.id == "MaxPool-12/infinities/1d-y[float32]")
    backend = load_backend("tests.meta.support.faulty_backends:SeedsFloat32AtLowestFinite")
    results = Results(environment([(backend, backend)], 0, bundled_case_dir()), None)
    record = item_record(item, bundled_case_dir())
    record["backend"], record["backend_version"] = backend_name, "0"
    results.records.append(with_verdict(record, evaluate(item, backend, 0, bundled_registry())))
    document = results.document(partial=False)
    document["environment"]["backends"][0]["name"] = backend_name
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("name", ["../outside", "/tmp/absolute", ".hidden", "a\x1bb"])
def test_expectations_into_a_directory_never_writes_outside_it(tmp_path, capsys, name):
    results = small_run(tmp_path, name)
    (tmp_path / "into").mkdir()
    assert main(["expectations", str(results), "--into", str(tmp_path / "into")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "cannot name a file" in error
    assert not list((tmp_path / "into").iterdir()) and not (tmp_path / "outside.yaml").exists()


def test_a_results_file_named_twice_is_refused_in_one_line(tmp_path, capsys):
    results = small_run(tmp_path, "faulty")
    assert main(["report", str(results), str(tmp_path / "." / "results.json"), "-o", str(tmp_path / "out")]) == 2
    assert "named twice" in capsys.readouterr().err and not (tmp_path / "out" / "report.html").exists()


def test_a_cache_key_others_may_read_or_that_another_user_owns_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    key_file = tmp_path / "maxpool-conformance" / cache.KEY_FILE
    key_file.parent.mkdir()
    key_file.write_text("ab" * 32)
    key_file.chmod(0o644)  # anyone may read it, and so forge entries
    assert cache.user_key() != bytes.fromhex("ab" * 32)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert cache.user_key() == bytes.fromhex(key_file.read_text())  # the new one is kept


def test_relative_or_empty_xdg_values_are_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert base_directory("XDG_CACHE_HOME", ".cache") == tmp_path / ".cache"
    monkeypatch.setenv("HOME", "")  # the password database's home, never "/.cache" or a relative one
    found = base_directory("XDG_CACHE_HOME", ".cache")
    assert found is None or (found.is_absolute() and found != type(found)("/.cache"))


def test_the_shared_expansion_cache_is_not_used_where_it_is_not_the_user_s_own(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    shared = tmp_path / "maxpool-conformance" / "expansions"
    shared.mkdir(parents=True)
    os.chmod(shared, 0o777)  # others may plant entries there
    assert cache.shared_cache_directory() is None
    os.chmod(shared, 0o700)
    assert cache.shared_cache_directory() == shared


# A sweep's own state is read as any untrusted file is: a regular file within a bound, never a FIFO
# waited on, never written through a link.

def test_a_fifo_in_place_of_a_cell_json_is_refused_at_once(tmp_path):
    from conformance.report.results import ResultsError
    from conformance.sweep.cells import CELL_FILE, finished, read_cells
    from conformance.sweep.plan import Cell

    os.mkfifo(tmp_path / CELL_FILE)
    with pytest.raises(ResultsError, match="not a sweep cell"):
        read_cells([tmp_path])
    assert finished(Cell("ort", "onnxruntime", "1.20.0"), tmp_path, "key") is None


def test_a_release_list_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path):
    from conformance.sweep.plan import SweepError, _minors_from

    os.mkfifo(tmp_path / "releases-onnxruntime.json")
    with pytest.raises(SweepError, match="none were listed before"):
        _minors_from("onnxruntime", "1.15", tmp_path, offline=True)
    os.unlink(tmp_path / "releases-onnxruntime.json")
    os.symlink("/dev/zero", tmp_path / "releases-onnxruntime.json")
    with pytest.raises(SweepError, match="none were listed before"):
        _minors_from("onnxruntime", "1.15", tmp_path, offline=True)


def test_a_history_that_is_a_fifo_is_refused_at_once(tmp_path):
    from conformance.report.results import ResultsError
    from conformance.report.scoreboard import read_history

    os.mkfifo(tmp_path / "history.jsonl")
    with pytest.raises(ResultsError, match="not a regular file"):
        read_history(tmp_path / "history.jsonl")


def test_a_cell_never_writes_its_files_through_planted_links(tmp_path, monkeypatch):
    from conformance.sweep import cells
    from conformance.sweep.plan import Cell

    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    directory = tmp_path / "cell"
    directory.mkdir()
    os.symlink(outside, directory / cells.CELL_FILE)
    monkeypatch.setattr(cells, "prepare", lambda env, root, requirements: "no installer here")
    cells.run_cell(Cell("ort", "onnxruntime", "1.20.0"), directory, "key", tmp_path / "envs", tmp_path)
    assert outside.read_text() == "mine" and not (directory / cells.CELL_FILE).is_symlink()
    os.symlink(outside, directory / "run.log")
    with cells._new_file(directory / "run.log") as log:
        log.write("a run")
    assert outside.read_text() == "mine" and not (directory / "run.log").is_symlink()


def test_names_from_files_are_plotted_as_plain_text_and_what_is_plotted_is_capped():
    """mathtext in a backend, release or label ("$...$") is text, control characters are dropped,
    and a history of 2,000 labels draws the newest few (it took 137 s when each was drawn)."""
    import time

    from conformance.report.scoreboard import MAX_SERIES, _plot, _plot_note

    evil = "$\\frac{1}{$" + "\x1b[31m"
    board = {"runtimes": {evil: {"releases": [f"{evil}{i}" for i in range(50)],
                                 "summary": {f"{evil}{i}": {"pass": i, "fail": 1} for i in range(50)}}},
             "history": [{"when": f"2026-11-{1 + i % 28:02d}", "label": f"{evil}{i}", "summary": {"pass": i}}
                         for i in range(2000)]}
    started = time.monotonic()
    svg = _plot(board)
    assert svg.startswith("<svg") and "\x1b" not in svg and time.monotonic() - started < 60
    note = _plot_note(board)
    assert f"the newest {MAX_SERIES} of 2000 labels" in note and "the newest 40 of 50 releases" in note


@pytest.mark.parametrize("summary", ['{"pass": "many"}', '{"pass": [1]}', '{"pass": 1e400}', '{"pass": NaN}',
                                     '{"pass": ' + "9" * 5000 + '}', '{"pass": true}', '{"pass": -1}'])
def test_a_history_value_that_is_not_a_count_is_refused_in_one_line(tmp_path, summary):
    from conformance.report.results import ResultsError
    from conformance.report.scoreboard import read_history

    (tmp_path / "history.jsonl").write_text('{"when": "2026-12-01", "label": "ort", "summary": ' + summary + "}\n")
    with pytest.raises(ResultsError) as info:
        read_history(tmp_path / "history.jsonl")
    assert "\n" not in str(info.value)


def test_diagnosis_has_a_switch_and_a_budget_whose_cut_the_report_states(item_for_diagnosis):
    """--conformance-diagnosis-budget 0 turns diagnosis off; past its budget a failure is judged as
    ever but left undiagnosed, and the record and the report say so."""
    from conformance.backends import load_backend
    from conformance.judge import diagnoses as diagnosis
    from conformance.judge.verdict import evaluate
    from conformance.report.causes import undiagnosed_line
    from tests.support.bundled import bundled_registry

    backend = load_backend("tests.meta.support.faulty_backends:SeedsFloat32AtLowestFinite")
    before = diagnosis.BUDGET.left
    try:
        diagnosis.BUDGET.left = 0
        verdict = evaluate(item_for_diagnosis, backend, 0, bundled_registry())
        assert verdict.outcome.value == "fail" and not verdict.diagnosis and verdict.undiagnosed
        diagnosis.BUDGET.left = 600
        verdict = evaluate(item_for_diagnosis, backend, 0, bundled_registry())
        assert verdict.diagnosis and verdict.undiagnosed is None and diagnosis.BUDGET.left < 600
    finally:
        diagnosis.BUDGET.left = before
    assert "1 failing item left undiagnosed" in undiagnosed_line([{"undiagnosed": "spent"}, {}])


@pytest.fixture
def item_for_diagnosis():
    from tests.support.bundled import bundled_items

    return next(i for i in bundled_items() if i.id == "MaxPool-12/infinities/1d-y_indices[float32]")


@pytest.mark.parametrize("option", ["--conformance-diagnosis-budget", "--conformance-explain-budget"])
def test_a_diagnosis_or_explanation_budget_that_is_not_seconds_is_a_usage_error(tmp_path, option):
    import subprocess
    import sys

    from conformance.plugin import PACKAGE_DIR

    done = subprocess.run([sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-p", "no:cacheprovider",
                           f"{option}=-1", "--collect-only", "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR and f"{option} -1.0" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_repro_goes_on_uncached_where_no_cache_key_can_be_kept(tmp_path, monkeypatch):
    from conformance.repro import script_of

    (tmp_path / "a-file").write_text("not a directory")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "a-file"))  # the key's directory cannot be made
    script = script_of("MaxPool-12/infinities/1d-y[float32]", "ort", 0, None, None)
    assert "MaxPool-12/infinities/1d-y[float32]" in script


def test_the_scoreboard_reads_its_results_within_one_total_bound(tmp_path, monkeypatch):
    from conformance.report import scoreboard
    from conformance.report.results import ResultsError

    first, second = small_run(tmp_path, "ort"), tmp_path / "second.json"
    second.write_bytes(first.read_bytes())
    monkeypatch.setattr(scoreboard, "MAX_RESULTS_BYTES", first.stat().st_size + 10)  # room for one, not two
    assert len(scoreboard.all_runs([first])) == 1
    with pytest.raises(ResultsError, match="over"):
        scoreboard.all_runs([first, second])


# A sweep's cells and environments are believed only under the user's own seal and record.

def _a_cell_that_ran(directory, key: str, seal: str | None) -> None:
    """A cell's files, with ``seal`` in its cell.json: None for none, "own" for the user's seal
    over the files as written (a run's results.json differs from run to run: its durations)."""
    from conformance.sweep.cells import CELL_FILE, seal_of

    directory.mkdir(parents=True, exist_ok=True)
    small_run(directory, "ort")
    (directory / "run.log").write_text("1 passed\n")
    cell = {"label": "ort@1.20.0", "backend": "ort", "package": "onnxruntime", "version": "1.20.0", "pins": [],
            "key": key, "status": "ran", "message": "", "seconds": 1.0, "summary": {}}
    if seal is not None:
        cell["seal"] = seal_of(directory, key) if seal == "own" else seal
    (directory / CELL_FILE).write_text(json.dumps(cell))


def test_a_cell_made_by_hand_is_never_reused_and_a_sealed_one_is_until_its_files_change(tmp_path, monkeypatch):
    from conformance.sweep.cells import finished
    from conformance.sweep.plan import Cell

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    cell, directory = Cell("ort", "onnxruntime", "1.20.0"), tmp_path / "cell"
    _a_cell_that_ran(directory, "key", seal=None)  # the key is a public digest: anyone can write it
    assert finished(cell, directory, "key") is None
    _a_cell_that_ran(directory, "key", seal="0" * 64)
    assert finished(cell, directory, "key") is None
    _a_cell_that_ran(directory, "key", seal="own")
    assert finished(cell, directory, "key") is not None
    (directory / "run.log").write_text("1 failed\n")  # either file changed after the seal
    assert finished(cell, directory, "key") is None
    _a_cell_that_ran(directory, "key", seal="own")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-user"))  # another key: not this user's seal
    assert finished(cell, directory, "key") is None


def test_a_planted_environment_is_made_again_and_never_run(tmp_path, monkeypatch):
    import subprocess

    from conformance.sweep import cells

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    env = tmp_path / "environments" / "planted"
    (env / "bin").mkdir(parents=True)
    ran = tmp_path / "the-planted-interpreter-ran"
    (env / "bin" / "python").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (env / "bin" / "python").chmod(0o755)
    (env / ".conformance-ready").write_text("")  # the marker an earlier version believed
    steps = []

    def installer(step, **kwargs):  # each installer step, recorded; the first makes a fresh interpreter
        steps.append(step)
        if len(steps) == 1:
            (env / "bin").mkdir(parents=True, exist_ok=True)
            (env / "bin" / "python").write_text("a fresh interpreter\n")
        return subprocess.CompletedProcess(step, 0, "", "")

    monkeypatch.setattr(cells.subprocess, "run", installer)
    assert cells.prepare(env, tmp_path, ["onnxruntime==1.20.0"]) is None
    assert len(steps) == 2 and not ran.exists() and not (env / ".conformance-ready").exists()
    assert (env / "bin" / "python").read_text() == "a fresh interpreter\n"
    assert cells.prepare(env, tmp_path, ["onnxruntime==1.20.0"]) is None and len(steps) == 2  # recorded: reused
    (env / "bin" / "python").write_text("#!/bin/sh\nplanted later\n")  # changed since its record
    assert cells.prepare(env, tmp_path, ["onnxruntime==1.20.0"]) is None and len(steps) == 4  # made again

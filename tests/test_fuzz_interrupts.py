"""`conformance fuzz` keeps what it found: output paths checked before the search, each cluster
written (atomically) as it is found, a report marked interrupted on Ctrl-C, and a total deadline
(--max-time) that bounds every phase, even against a backend that hangs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.cli import main
from tests.support.samples import ctrl_c_restored

ROOT = Path(__file__).resolve().parent.parent
WRONG = ["--backend=tests.meta.support.faulty_backends:WrongAtVersion12", "--ops=MaxPool-12", "--isolation=none"]


STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_process_left_behind():
    """A test that fails while its command still runs (a timeout) kills it: left running, it would
    take a core from every test after it."""
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
            process.communicate()


def _fuzz(tmp_path, *arguments):
    STARTED.append(subprocess.Popen([sys.executable, "-m", "conformance", "fuzz", *arguments, "--out",
                                     str(tmp_path / "out"), "--report", str(tmp_path / "report")], cwd=ROOT,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    preexec_fn=ctrl_c_restored))
    return STARTED[-1]


def _wait_for_a_cluster(tmp_path, process, seconds=60):
    deadline = time.monotonic() + seconds
    while not (list((tmp_path / "out" / "repro").glob("*.py")) and (tmp_path / "report" / "summary.md").exists()):
        assert process.poll() is None and time.monotonic() < deadline, "no cluster was written"
        time.sleep(0.05)


@pytest.mark.parametrize("where", ["out", "report"])
def test_an_output_path_that_is_a_file_is_refused_before_the_search(tmp_path, capsys, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    started = time.monotonic()
    assert main(["fuzz", *WRONG, "--budget=100000", f"--{where}", str(blocker)]) == 2
    assert time.monotonic() - started < 5 and capsys.readouterr().err.count("\n") == 1


def test_ctrl_c_writes_the_clusters_found_and_a_report_marked_interrupted(tmp_path):
    process = _fuzz(tmp_path, *WRONG, "--budget=100000")
    _wait_for_a_cluster(tmp_path, process)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "interrupted" in err
    document = json.loads((tmp_path / "report" / "results.json").read_text())
    assert document["interrupted"] and document["partial"] and document["fuzz"][0]["stopped"] == "interrupted"
    clusters = document["fuzz"][0]["clusters"]
    assert clusters and len(list((tmp_path / "out" / "repro").glob("*.py"))) == len(clusters) == len(document["items"])


def test_a_killed_fuzz_leaves_every_cluster_found_before_the_kill(tmp_path):
    process = _fuzz(tmp_path, *WRONG, "--budget=100000")
    _wait_for_a_cluster(tmp_path, process)
    process.kill()
    process.communicate(timeout=60)
    document = json.loads((tmp_path / "report" / "results.json").read_text())
    assert document["partial"] and not document["interrupted"] and document["fuzz"][0]["clusters"]
    cases = (tmp_path / "out" / "cases" / "fuzz_maxpool.yaml").read_text()
    assert cases.count("- name:") >= 1 and not list((tmp_path / "out").rglob("*.tmp"))


def test_max_time_bounds_every_phase_against_a_backend_that_hangs(tmp_path):
    started = time.monotonic()
    process = _fuzz(tmp_path, "--backend=tests.meta.support.faulty_backends:Hangs", "--timeout=1", "--max-time=4", "--budget=1000")
    out, err = process.communicate(timeout=120)
    assert time.monotonic() - started < 4 + 1 + 15  # the deadline, one item's timeout, and the start
    assert process.returncode == 2 and "--max-time 4 s passed before any configuration was judged" in err
    assert json.loads((tmp_path / "report" / "results.json").read_text())["fuzz"][0]["stopped"] == "max-time"


def test_max_time_stops_the_shrinking_and_what_was_found_stands(tmp_path):
    process = _fuzz(tmp_path, *WRONG, "--budget=100000", "--max-time=3")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, err[-2000:]
    assert "stopped by --max-time" in out
    document = json.loads((tmp_path / "report" / "results.json").read_text())
    assert not document["partial"] and document["fuzz"][0]["clusters"]


# --- the other long commands: export and report ---------------------------------------------------

def _interrupted(arguments, ready, delay_s, cwd=ROOT):
    """Start ``conformance ARGUMENTS``, wait until ``ready(process)``, then Ctrl-C it after ``delay_s``."""
    process = subprocess.Popen([sys.executable, "-m", "conformance", *arguments], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_restored)
    STARTED.append(process)
    deadline = time.monotonic() + 120
    while not ready(process) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(delay_s)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    return process.returncode, err


@pytest.mark.parametrize("delay_s", [0.0, 0.3, 0.9, 2.0])
def test_an_interrupted_export_leaves_only_whole_tests_and_a_manifest_that_says_so(tmp_path, delay_s):
    target = tmp_path / "exported"
    code, err = _interrupted(["export", str(target)], lambda _: target.is_dir() and any(target.iterdir()),
                             delay_s)
    assert code == 130 and err.strip() == "conformance export: interrupted", err[-2000:]
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["interrupted"]
    assert not list(target.rglob(".*.partial"))
    for test in manifest["tests"]:
        data = target / test["test"] / "test_data_set_0"
        assert (target / test["test"] / "model.onnx").is_file() and (data / "input_0.pb").is_file()
        assert test["kind"] == "must_reject" or (data / "output_0.pb").is_file()


def _past_its_interpreter_s_start(process) -> bool:
    """numpy's extension is mapped: the interpreter has started and runs the command's imports,
    which ``conformance/__main__.py`` guards. A Ctrl-C during the interpreter's own start (its
    ``site`` module, which an editable install's .pth runs code in) is Python's to answer: "Fatal
    Python error: init_import_site" and exit 1. That came from waiting a fixed second on a loaded
    machine, where starting took longer."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{process.pid}/maps").read_text()
    except OSError:  # exited meanwhile
        return True


@pytest.mark.parametrize("delay_s", [0.0, 0.05, 0.2, 0.5])
def test_an_interrupted_report_leaves_the_old_files_or_the_new_ones(tmp_path, delay_s):
    example = ROOT / "docs" / "example" / "results.json"
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("the old report")
    code, err = _interrupted(["report", str(example), "-o", str(out)], _past_its_interpreter_s_start, delay_s)
    # -SIGINT: the signal came before the interpreter could catch it (a loaded machine); the files hold either way
    assert code in (0, 130, -signal.SIGINT) and "Traceback" not in err, (code, err[-2000:])
    html = (out / "report.html").read_text()
    assert html == "the old report" or html.rstrip().endswith("</html>")
    assert not list(out.glob("*.tmp"))


def test_ctrl_c_inside_a_gc_callback_prints_nothing_and_stops_the_fuzz_at_its_next_check(monkeypatch):
    """Python prints an exception raised in a gc callback ("Exception ignored in ... gc_callback")
    and drops it: there the fuzz's handler only remembers Ctrl-C, which the search then honours."""
    import gc
    from types import SimpleNamespace

    from conformance.fuzz.engine import Fuzzer, _ctrl_c_remembered

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    fuzzer = SimpleNamespace(ctrl_c=False, deadline=None)

    def gc_callback(phase, info):  # as hypothesis's: Ctrl-C lands while it runs
        if phase == "start":
            signal.raise_signal(signal.SIGINT)

    gc.callbacks.append(gc_callback)
    try:
        with _ctrl_c_remembered(fuzzer):
            gc.collect()
    finally:
        gc.callbacks.remove(gc_callback)
    assert fuzzer.ctrl_c and unraisable == []
    with pytest.raises(KeyboardInterrupt):  # the search's next check ends it, with what it found
        Fuzzer._past_deadline(fuzzer)

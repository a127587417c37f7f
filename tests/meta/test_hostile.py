"""A hostile case directory costs one line per file and nothing else: tests/meta/hostile holds case
files written to hang, exhaust or confuse the loader (alias bombs, deep nesting, huge literals,
designs that explode, derive loops and escapes, invalid geometry, budgets broken, unicode
tricks), and the test adds what git cannot hold (a FIFO, devices, a 10 GiB sparse file,
directories and sockets named *.yaml, symlink loops, names with a newline or a bidi override).
Each gives the one line tests/meta/hostile/EXPECTED names; the whole directory, beside good files and
under a broken registry, runs in one pytest process within 1 GB and 30 s of CPU time, and the good
files pass.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from conformance.expand.items import expand
from conformance.load.cases import CaseError, bundled_case_dir, escaped, load_case_file, load_registry
from conformance.load.limits import parse_limits
from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

CORPUS = Path(__file__).with_name("hostile")
REGISTRIES = Path(__file__).with_name("hostile_registries")
EXPECTED = yaml.safe_load((CORPUS / "EXPECTED").read_text())
REGISTRY_EXPECTED = yaml.safe_load((REGISTRIES / "EXPECTED").read_text())
GOOD_FILES = {"zz_good.yaml": SMALL_CASE, "zz_good_too.yml": SMALL_CASE.replace("name: small", "name: small_yml")}
GOOD_ITEMS = 12  # SMALL_CASE applies at the six MaxPool versions, twice
NESTED = "nested" + "/deeper" * 30
PEAK_RSS_LIMIT = 2**30
CPU_LIMIT_S = 30  # user + system time of the run: wall time depends on what else the machine runs
HANG_LIMIT_S = 180  # wall time after which the run is killed as hung


def create_what_git_cannot_hold(cases: Path) -> None:
    """The entries of EXPECTED that are not committed files."""
    os.mkfifo(cases / "fifo.yaml")
    (cases / "dev_zero.yaml").symlink_to("/dev/zero")
    (cases / "dev_urandom.yaml").symlink_to("/dev/urandom")
    (cases / "two_mib.yaml").write_text("# padding\n" * (2**21 // 10 + 1))
    with open(cases / "sparse_10_gib.yaml", "wb") as sparse:
        sparse.truncate(10 * 2**30)
    (cases / "directory.yaml").mkdir()
    (cases / "a_directory.yaml").mkdir()  # named by derive_a_directory.yaml
    (cases / "dangling_symlink.yaml").symlink_to(cases / "no_such_target")
    (cases / "symlink_loop.yaml").symlink_to(cases / "symlink_loop.yaml")
    (cases / "symlink_to_this_directory").symlink_to(cases)  # not followed: no loop, no line
    (cases / "newline\nfake.yaml:1: ok.yaml").write_text("")
    (cases / "\u202elmay.txt.yaml").write_text("op: MaxPool\n")
    (cases / "bad.yml").write_text("op: MaxPool\ncases: 1\n")
    (cases / NESTED).mkdir(parents=True)
    (cases / NESTED / "deep_and_empty.yaml").write_text("")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(cases / "socket.yaml"))
    listening.close()


def build_hostile_dir(cases: Path) -> Path:
    shutil.copytree(CORPUS, cases, ignore=shutil.ignore_patterns("EXPECTED"))
    create_what_git_cannot_hold(cases)
    return cases


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory) -> Path:
    return build_hostile_dir(tmp_path_factory.mktemp("hostile") / "cases")


def _expected_line(cases: Path, name: str) -> str:
    want = EXPECTED[name]
    where = f" {want['field']}:" if want["field"] else ""
    return escaped(f"{cases / name}:{want['line']}:{where} {want['message']}")


def test_the_corpus_holds_over_100_hostile_entries_each_with_its_line():
    committed = sorted(p.name for p in CORPUS.iterdir() if p.name != "EXPECTED")
    assert len(EXPECTED) >= 100
    assert set(committed) <= set(EXPECTED)
    assert all("\n" not in str(want["message"]) for want in EXPECTED.values())


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=escaped)
def test_a_hostile_file_gets_one_line_naming_file_line_and_field(hostile_dir, name):
    registry = load_registry(bundled_case_dir())
    with pytest.raises(CaseError) as info:
        for case in load_case_file(hostile_dir / name, registry):
            for item in expand(case):
                item.model
    want = EXPECTED[name]
    assert (info.value.line, info.value.field, info.value.message) == (want["line"], want["field"], want["message"])
    assert str(info.value) == _expected_line(hostile_dir, name)
    assert str(info.value).isprintable()


@pytest.mark.parametrize("name", sorted(REGISTRY_EXPECTED))
def test_a_hostile_registry_gets_one_line(tmp_path, name):
    shutil.copy(REGISTRIES / name, tmp_path / "ambiguities.yaml")
    with pytest.raises(CaseError) as info:
        load_registry(tmp_path)
    want = REGISTRY_EXPECTED[name]
    assert (info.value.line, info.value.field, info.value.message) == (want["line"], want["field"], want["message"])


def test_a_fifo_registry_gets_one_line(tmp_path):
    os.mkfifo(tmp_path / "ambiguities.yaml")
    with pytest.raises(CaseError, match="is not a regular file but a FIFO"):
        load_registry(tmp_path)


def test_limits_can_be_raised_and_mistyped_ones_are_refused():
    assert parse_limits(["taps=1_000_000", "elements=5"]).taps == 1_000_000
    for wrong, words in (("tap=5", "no limit 'tap'"), ("taps=lots", "not an integer"), ("taps=0", "positive")):
        with pytest.raises(ValueError, match=words):
            parse_limits([wrong])
    case = CORPUS / "kernel_of_500000_taps_1d.yaml"
    (loaded,) = load_case_file(case, load_registry(bundled_case_dir()), parse_limits(["taps=500000", "work=500000"]))
    assert loaded.attributes["kernel_shape"] == [500000]


def test_the_whole_hostile_directory_runs_in_one_process_within_1_gb_and_30_s_of_cpu(tmp_path):
    cases = build_hostile_dir(tmp_path / "cases")
    for name, text in GOOD_FILES.items():
        (cases / name).write_text(text)
    shutil.copy(REGISTRIES / "billion_laughs.yaml", cases / "ambiguities.yaml")
    command = [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "--cases", str(cases), "-p", "no:cacheprovider",
               "-W", "ignore::pytest.PytestAssertRewriteWarning", "-q", "-n", "0"]
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    watchdog = threading.Timer(HANG_LIMIT_S, os.killpg, (process.pid, signal.SIGKILL))
    watchdog.start()
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)  # the run's own usage, its reaped children's included
    watchdog.cancel()
    wall, cpu = time.monotonic() - start, usage.ru_utime + usage.ru_stime
    assert os.waitstatus_to_exitcode(status) == pytest.ExitCode.TESTS_FAILED, output[-3000:]
    assert "Traceback" not in output
    assert "\nfake.yaml:1: ok" not in output  # pytest's own headers show the name escaped too
    assert usage.ru_maxrss * 1024 < PEAK_RSS_LIMIT, f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB"
    assert cpu < CPU_LIMIT_S, f"{cpu:.1f} s of CPU time ({wall:.1f} s wall)"
    missing = [name for name in EXPECTED if _expected_line(cases, name) not in output]
    assert not missing, missing
    assert f"{cases / 'ambiguities.yaml'}:{REGISTRY_EXPECTED['billion_laughs.yaml']['line']}:" in output
    assert f"{GOOD_ITEMS} passed" in output
    print(f"hostile run: peak RSS {usage.ru_maxrss / 1024:.0f} MiB, {cpu:.1f} s CPU, {wall:.1f} s wall")

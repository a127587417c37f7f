"""The frozen derived expectations: `conformance lock` writes, checks and guards them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conformance.expand.items import load_items
from conformance.judge import ambiguities, lock
from conformance.judge.lock import Lock, LockError, lock_path
from conformance.judge.verdict import SuiteError, evaluate
from conformance.load.cases import load_registry
from tests.support.bundled import bundled_items

CASES = """\
    op: MaxPool
    cases:
      - name: ceil_window
        description: ceil_mode with a last window that starts past the input
        provenance: {generated: a test}
        versions: [12]
        attributes: {kernel_shape: [1], strides: [2], ceil_mode: 1}
        inputs:
          X: {dtype: float32, data: [[[1, 2, 3, 4, 5, 6]]]}
        outputs: {Y: derived}
    """


@pytest.fixture
def case_dir(tmp_path):
    (tmp_path / "probe.yaml").write_text(textwrap.dedent(CASES))
    return tmp_path


def test_update_writes_a_sorted_line_per_derived_item_and_check_agrees(case_dir, capsys):
    assert lock.update(case_dir) == 0
    lines = lock_path(case_dir).read_text().splitlines()
    assert lines[-1].startswith("MaxPool-12/ceil_window[float32]\tY=float32[1,1,3]:")
    assert lock.check(case_dir) == 0
    assert "all as locked" in capsys.readouterr().out


def test_a_changed_reference_turns_check_red_and_update_refuses(case_dir, capsys, monkeypatch):
    assert lock.update(case_dir) == 0
    written = lock_path(case_dir).read_text()
    # The reference drops no ceil window any more: a bug the naive loops do not share.
    other = ambiguities.reference(ambiguities.Readings({"ceil-window-starts-in-padding": "formula-as-printed"}))
    monkeypatch.setattr(ambiguities, "reference", lambda readings=ambiguities.DEFAULT: other)
    capsys.readouterr()
    assert lock.check(case_dir) == 1
    out = capsys.readouterr().out
    assert "MaxPool-12/ceil_window[float32]:" in out and "now:    Y=float32[1,1,4]" in out
    assert "locked: Y=float32[1,1,3]" in out and "naive loops float32[1, 1, 3]" in out
    assert lock.update(case_dir) == 1
    assert lock_path(case_dir).read_text() == written


def test_a_run_judges_no_item_whose_derived_expectation_left_the_lock(case_dir):
    assert lock.update(case_dir) == 0
    (item,) = load_items(case_dir)
    stale = Lock(lock_path(case_dir))
    stale.lines[item.id] = stale.lines[item.id].replace("Y=", "Y=0")
    registry = load_registry(case_dir)
    backend = ambiguities.reference()
    assert evaluate(item, backend, 0, registry, Lock(lock_path(case_dir))).outcome.value == "divergent"
    with pytest.raises(LockError, match="differs from derived.lock"):
        evaluate(item, backend, 0, registry, stale)


def test_the_bundled_lock_covers_exactly_the_derived_items():
    locked = set(lock.read_lock(lock_path()))
    assert locked == {item.id for item in bundled_items() if item.expectation == "derived"}


def test_the_cli_runs_as_a_module(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"environment": {"backends": [{"name": "probe"}]}, "items": [],
                                   "collection_errors": [], "partial": False}))
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "expectations", str(results)],
                          capture_output=True, text=True)
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("plant, says", [
    (lambda p: p.unlink(), "No such file"),
    (lambda p: (p.unlink(), os.mkfifo(p)), "FIFO"),
    (lambda p: (p.unlink(), p.mkdir()), "directory"),
    (lambda p: (p.unlink(), p.symlink_to("/dev/zero")), "character device"),
    (lambda p: p.write_bytes(b"\xff\xfe not text"), "not UTF-8"),
    (lambda p: p.write_text("MaxPool-12/ceil_window[float32] without a tab\n"), "not a locked line"),
])
def test_a_lock_that_is_no_lock_is_one_line_and_exit_2_and_fails_every_derived_item(case_dir, capsys, plant, says):
    assert lock.update(case_dir) == 0
    plant(lock_path(case_dir))
    capsys.readouterr()
    assert lock.check(case_dir) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    (item,) = load_items(case_dir)
    with pytest.raises(SuiteError, match=f"cannot be checked: .*{says}"):
        evaluate(item, ambiguities.reference(), 0, load_registry(case_dir), Lock(lock_path(case_dir)))


def test_an_item_the_lock_does_not_cover_is_the_suite_s_error_not_silence(case_dir):
    assert lock.update(case_dir) == 0
    lock_path(case_dir).write_text("# an empty (or truncated) lock\n")
    (item,) = load_items(case_dir)
    with pytest.raises(SuiteError, match="has no line in .*never frozen"):
        evaluate(item, ambiguities.reference(), 0, load_registry(case_dir), Lock(lock_path(case_dir)))


def test_a_fifo_lock_is_refused_without_waiting_for_a_writer(tmp_path):
    """Opening a FIFO waits for a writer: the lock never opens one that way."""
    os.mkfifo(tmp_path / "derived.lock")
    result = subprocess.run([sys.executable, "-c", "from conformance.judge.lock import Lock; from pathlib import Path;"
                             f"print(Lock(Path({str(tmp_path / 'derived.lock')!r})).problem)"],
                            capture_output=True, text=True, timeout=30)
    assert "FIFO" in result.stdout


def test_update_never_writes_through_a_link_at_its_temporary_name(case_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (case_dir / f".derived.lock.{os.getpid()}.tmp").symlink_to(victim)
    assert lock.update(case_dir) == 0
    assert victim.read_text() == "precious" and "ceil_window" in lock_path(case_dir).read_text()

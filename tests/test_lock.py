"""The frozen derived expectations: `conformance lock` writes, checks and guards them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conformance.expand.items import load_items
from conformance.judge import ambiguities, lock
from conformance.judge.lock import Lock, LockError, lock_path
from conformance.judge.verdict import evaluate
from conformance.load.cases import bundled_case_dir, load_registry

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
    assert locked == {item.id for item in load_items(bundled_case_dir()) if item.expectation == "derived"}


def test_the_cli_runs_as_a_module(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"environment": {"backends": [{"name": "probe"}]}, "items": [],
                                   "collection_errors": [], "partial": False}))
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "expectations", str(results)],
                          capture_output=True, text=True)
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr

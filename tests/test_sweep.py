"""`conformance sweep`, `bisect` and `scoreboard`: the machinery on two small cells of real ONNX
Runtime releases (installed by uv from PyPI, one case at one version), and the scoreboard's
arithmetic on made-up runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.report.scoreboard import write_scoreboard
from conformance.report.writer import SCHEMA_VERSION

SWEEPS = Path(__file__).parent / "sweeps"
ITEM = "MaxPool-12/negative_span_not_a_multiple_of_the_stride/floor_1d_k4_s2_p1-y[int8]"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The two-release sweep, run once cold for the module (its environments made fresh; with uv,
    which the [test] extra installs, else with venv and pip: never skipped)."""
    out = tmp_path_factory.mktemp("sweep")
    code = main(["sweep", str(SWEEPS / "two_releases.yaml"), "--out", str(out / "board"),
                 "--environments", str(out / "environments")])
    return code, out


@pytest.mark.slow
def test_a_sweep_runs_each_release_in_its_own_environment_and_writes_the_scoreboard(swept):
    code, out = swept
    assert code == 0
    cells = {p.name: json.loads((p / "cell.json").read_text()) for p in (out / "board" / "cells").iterdir()}
    assert sorted(cells) == ["ort@1.20.1", "ort@1.21.1"] and all(c["status"] == "ran" for c in cells.values())
    for label in cells:  # each run carries its label, and ran the release it names
        document = json.loads((out / "board" / "cells" / label / "results.json").read_text())
        assert document["environment"]["label"] == label and {r["label"] for r in document["items"]} == {label}
        assert document["environment"]["backends"][0]["version"] == label.split("@")[1]
    board = json.loads((out / "board" / "scoreboard" / "scoreboard.json").read_text())
    ort = board["runtimes"]["ort"]
    assert ort["releases"] == ["1.20.1", "1.21.1"]
    truncation = next(c for c in ort["causes"] if "output_size_truncated" in c["signature"])
    assert (truncation["first_seen"], truncation["last_seen"], truncation["fixed_in"]) == ("1.21.1", "1.21.1", None)
    assert truncation["example"]["cause"] == "output_size_truncated"  # from expectations/ort.yaml, with its reason
    (step,) = ort["regressions"]
    assert (step["from"], step["to"]) == ("1.20.1", "1.21.1") and step["items"] > 0
    page = (out / "board" / "scoreboard" / "index.html").read_text()
    assert "<svg" in page and "Regressions between consecutive releases" in page and "http" not in page.split("<svg")[0]


@pytest.mark.slow
def test_a_sweep_run_again_on_the_same_suite_reuses_its_cells(swept, capsys):
    _, out = swept
    capsys.readouterr()
    assert main(["sweep", str(SWEEPS / "two_releases.yaml"), "--out", str(out / "board"),
                 "--environments", str(out / "environments")]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ort@")]
    assert len(lines) == 2 and all(" reused " in line for line in lines), lines


@pytest.mark.slow
def test_bisect_names_the_first_release_where_an_item_changes(swept, capsys):
    _, out = swept
    capsys.readouterr()
    assert main(["bisect", ITEM, "--sweep", str(SWEEPS / "two_releases.yaml"), "--out", str(out / "board"),
                 "--environments", str(out / "environments")]) == 0
    text = capsys.readouterr().out
    assert "changes between 1.20.1 and 1.21.1" in text and "1.20.1: pass" in text and "1.21.1: fail: Y: shape" in text


@pytest.mark.slow
def test_a_release_that_cannot_install_is_recorded_with_the_installer_s_line_and_the_sweep_goes_on(swept, tmp_path, capsys):
    _, out = swept
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text((SWEEPS / "two_releases.yaml").read_text().replace('["1.20.1", "1.21.1"]', '["1.20.1", "0.0.1"]'))
    shutil.copytree(out / "board" / "cells" / "ort@1.20.1", tmp_path / "board" / "cells" / "ort@1.20.1")  # reused
    capsys.readouterr()
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "board"), "--environments", str(out / "environments")]) == 1
    cell = json.loads((tmp_path / "board" / "cells" / "ort@0.0.1" / "cell.json").read_text())
    assert cell["status"] == "cannot install" and "onnxruntime" in cell["message"] and "\n" not in cell["message"]
    assert (tmp_path / "board" / "cells" / "ort@1.20.1" / "results.json").exists()
    assert "cannot install" in (tmp_path / "board" / "scoreboard" / "index.html").read_text()
    # the last job of a CI matrix: the scoreboard from the cells' directories, one of which did not run
    cells = sorted((tmp_path / "board" / "cells").iterdir())
    assert main(["scoreboard", *map(str, cells), "-o", str(tmp_path / "again")]) == 0
    board = json.loads((tmp_path / "again" / "scoreboard.json").read_text())
    assert [c["label"] for c in board["cells_not_run"]] == ["ort@0.0.1"] and board["runtimes"]["ort"]["releases"] == ["1.20.1"]


def test_a_bad_sweep_file_is_one_line(tmp_path, capsys):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("runtimes:\n  - backend: ort\n    package: onnxruntime\n    releases: {minors_from: latest}\n")
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--list"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "minors_from" in error


def test_offline_without_a_release_list_kept_is_one_line(tmp_path, capsys):
    assert main(["sweep", str(SWEEPS.parent.parent / "sweeps" / "releases.yaml"), "--out", str(tmp_path), "--offline",
                 "--list"]) == 2
    assert "cannot list the releases of onnxruntime" in capsys.readouterr().err


def test_the_matrix_lists_every_cell_for_a_ci_job_each(capsys):
    assert main(["sweep", str(SWEEPS / "two_releases.yaml"), "--matrix"]) == 0
    matrix = json.loads(capsys.readouterr().out)
    assert [row["cell"] for row in matrix["include"]] == ["ort@1.20.1", "ort@1.21.1"]


def _run(tmp_path: Path, release: str, outcomes: dict[str, str], label: bool = True) -> Path:
    items = [{"id": f"MaxPool-12/{name}[float32]", "op": "MaxPool", "version": 12, "backend": "rt", "backend_version": release,
              "outcome": outcome, "message": "Y: 1 of 1 elements differ" if outcome == "fail" else "",
              "diff": [{"output": "Y", "summary": "Y: 1 of 1 elements differ"}] if outcome == "fail" else [],
              "inputs": [{"name": "X", "shape": [1, 1, 2], "dtype": "float32"}], "attributes": {}}
             for name, outcome in outcomes.items()]
    environment = {"suite_version": "0", "backends": [{"name": "rt", "version": release, "details": {}}], "onnx": "1",
                   "numpy": "2", "python": "3.11", "platform": "linux", "seed": 0, "cases": "cases",
                   **({"label": f"rt@{release}"} if label else {})}
    document = {"schema_version": SCHEMA_VERSION, "partial": False, "interrupted": False, "environment": environment,
                "started": "2026-11-26T00:00:00Z", "finished": "2026-11-26T00:01:00Z",
                "summary": {}, "collection_errors": [], "items": items, "catalogue": {}}
    path = tmp_path / release / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document))
    return path


def test_the_scoreboard_dates_each_cause_by_its_first_and_last_release_and_the_fix(tmp_path):
    runs = [_run(tmp_path, "1.9.0", {"a": "pass", "b": "pass"}), _run(tmp_path, "1.10.0", {"a": "fail", "b": "pass"}),
            _run(tmp_path, "1.11.0", {"a": "fail", "b": "pass"}), _run(tmp_path, "1.12.0", {"a": "pass", "b": "pass"})]
    history = tmp_path / "history.jsonl"
    write_scoreboard(runs[::-1], tmp_path / "board", history=history)  # any order: releases sort as versions
    board = json.loads((tmp_path / "board" / "scoreboard.json").read_text())
    rt = board["runtimes"]["rt"]
    assert rt["releases"] == ["1.9.0", "1.10.0", "1.11.0", "1.12.0"]
    (cause,) = rt["causes"]
    assert (cause["first_seen"], cause["last_seen"], cause["fixed_in"]) == ("1.10.0", "1.11.0", "1.12.0")
    assert [(s["from"], s["to"]) for s in rt["regressions"]] == [("1.9.0", "1.10.0")]
    assert len(history.read_text().splitlines()) == 4
    write_scoreboard(runs, tmp_path / "board", history=history)  # a second nightly: the history grows
    assert len(json.loads((tmp_path / "board" / "scoreboard.json").read_text())["history"]) == 8


def test_a_history_file_that_is_not_json_lines_is_one_line(tmp_path, capsys):
    history = tmp_path / "history.jsonl"
    history.write_text("not json\n")
    run = _run(tmp_path, "1.0.0", {"a": "pass"})
    assert main(["scoreboard", str(run), "-o", str(tmp_path / "board"), "--history", str(history)]) == 2
    assert capsys.readouterr().err.strip().endswith("history.jsonl:1: not a JSON line")


def test_report_keeps_two_labelled_runs_of_one_backend_apart(tmp_path):
    from conformance.report.results import load

    merged = load([_run(tmp_path, "1.9.0", {"a": "pass"}), _run(tmp_path, "1.10.0", {"a": "fail"})])
    assert sorted({r["backend"] for r in merged["items"]}) == ["rt@1.10.0", "rt@1.9.0"]


def test_a_cause_whose_items_still_fail_otherwise_is_changed_not_fixed(tmp_path):
    runs = [_run(tmp_path, "2.0.0", {"a": "fail"}), _run(tmp_path, "2.1.0", {"a": "error"})]
    write_scoreboard(runs, tmp_path / "board")
    causes = json.loads((tmp_path / "board" / "scoreboard.json").read_text())["runtimes"]["rt"]["causes"]
    values = next(c for c in causes if c["signature"].startswith("fail:"))
    assert (values["fixed_in"], values["changed_in"], values["still_failing"]) == (None, "2.1.0", 1)

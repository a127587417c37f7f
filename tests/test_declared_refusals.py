"""Unsupported is what a runtime declares, not what it crashes on. A valid twin is a control only
where the backend declares that it cannot run it (``Unsupported``, ``NotImplementedError``, a
refusal its adapter's table classifies as a capability); a twin that panics, segfaults, hangs,
kills its process or raises anything else is a bug on the minimal valid model: its items are
failures, and the report names that model in one line."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.backends import base, onnx2torch, openvino, ort, ort_js, tract
from conformance.plugin import PACKAGE_DIR
from tests.test_isolation import WITH_INDICES

ROOT = PACKAGE_DIR.parent
TABLES = {"ort": ort.CAPABILITIES, "openvino": openvino.CAPABILITIES, "tract": tract.CAPABILITIES,
          "ort-js": ort_js.CAPABILITIES, "onnx2torch": onnx2torch.CAPABILITIES}
ENTRIES = [(name, entry) for name, table in TABLES.items() for entry in table]


@pytest.mark.parametrize("name, entry", ENTRIES, ids=[f"{n}:{e.words[:40]}" for n, e in ENTRIES])
def test_each_capability_an_adapter_declares_matches_the_message_it_quotes(name, entry):
    assert re.search(entry.words, entry.example) and entry.source


def test_a_message_no_table_lists_is_no_declaration():
    for name, table in TABLES.items():
        assert not base.declared("Segmentation fault (core dumped)", table), name
        assert not base.declared("AttributeError: 'NoneType' object has no attribute 'indices'", table), name


ONE_OP = WITH_INDICES + """\
  - name: row
    description: a 2-wide kernel pools a row of two to one element, and points at it
    provenance: {document: test, example: row}
    versions: [12]
    attributes: {kernel_shape: [2]}
    inputs:
      X: {dtype: float32, data: [[[1, 2]]]}
    outputs:
      Y: {data: [[[2]]]}
      Indices: {data: [[[1]]]}
  - name: values_only
    description: a 2x2 kernel pools a 2x2 plane to one element
    provenance: {document: test, example: values_only}
    versions: [12]
    attributes: {kernel_shape: [2, 2]}
    inputs:
      X: {dtype: float32, data: [[[[1, 2], [3, 4]]]]}
    outputs:
      Y: {data: [[[[4]]]]}
"""
# fake -> the outcome of its items with Indices, twins included, and words of its line
UNDECLARED = {"PanicsOnIndices": ("error", "PanicException: internal validation error"),
              "SegfaultsOnIndices": ("crash", "killed by SIGSEGV"),
              "AttributeErrorOnIndices": ("error", "AttributeError: 'NoneType' object has no attribute 'indices'"),
              "HangsOnIndices": ("timeout", "no answer within 2 s"),
              "KillsItselfOnIndices": ("crash", "killed by SIGKILL")}
DECLARED = "NotImplementedOnIndices"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("declared")
    (directory / "cases").mkdir()
    (directory / "cases" / "small.yaml").write_text(ONE_OP)
    backends = ",".join(f"tests.meta.support.faulty_backends:{name}" for name in [*UNDECLARED, DECLARED])
    done = subprocess.run([sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-p", "no:cacheprovider", "--cases=cases",
                           "--report=out", "--conformance-timeout=2", f"--backend={backends}"],
                          cwd=directory, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=600)
    return directory, done, json.loads((directory / "out" / "results.json").read_text())


def records_of(document: dict, backend: str) -> list[dict]:
    return [r for r in document["items"] if r["backend"] == backend]


@pytest.mark.parametrize("backend", sorted(UNDECLARED))
def test_a_twin_that_fails_undeclared_makes_its_items_failures_never_unsupported(run, backend):
    _, _, document = run
    outcome, _ = UNDECLARED[backend]
    with_indices = [r for r in records_of(document, backend) if "values_only" not in r["id"]]
    assert len(with_indices) == 3 and {r["outcome"] for r in with_indices} == {outcome}
    assert all(r["twin"]["outcome"] == outcome and "control" not in r for r in with_indices)
    assert [r["outcome"] for r in records_of(document, backend) if "values_only" in r["id"]] == ["pass"]


@pytest.mark.parametrize("backend", sorted(UNDECLARED))
def test_the_report_names_the_minimal_valid_model_in_one_line(run, backend):
    from conformance.report.causes import failure_clusters

    _, _, document = run
    _, words = UNDECLARED[backend]
    (line,) = failure_clusters(document["items"])[backend]
    assert "fails on the minimal valid model of MaxPool-12, 22 float32 rank 3, 4 (outputs Y, Indices)" in line.signature
    assert words in line.signature and len(line.records) == 3


def test_the_end_of_the_run_lists_the_failed_minimal_models_apart_from_what_it_cannot_run(run):
    _, done, _ = run
    section = done.stdout.partition("minimal valid models the backend fails (no declared refusal)")[2]
    assert all(f"{b}: 3 items: " in section for b in UNDECLARED)
    assert "what the backend cannot run at all" not in done.stdout  # nothing was declared of a twin


def test_a_declared_refusal_on_the_same_items_is_unsupported(run):
    _, _, document = run
    with_indices = [r for r in records_of(document, DECLARED) if "values_only" not in r["id"]]
    assert {r["outcome"] for r in with_indices} == {"unsupported"} and not any("twin" in r for r in with_indices)


def test_the_twin_s_script_is_written_by_repro_twin(run):
    directory, _, document = run
    record = next(r for r in records_of(document, "AttributeErrorOnIndices") if r["id"] == "MaxPool-12/row[float32]")
    assert record["twin"]["script"].endswith(" --twin")
    words = shlex.split(record["twin"]["script"])[2:]  # conformance repro ...
    done = subprocess.run([sys.executable, "-m", "conformance", "repro", *words],
                          cwd=directory, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "MaxPool-12/valid_twin/rank3-X-Y_Indices[float32]" in done.stdout
    assert "Rewrite it with `conformance repro 'MaxPool-12/row[float32]'" in done.stdout and "--twin`" in done.stdout
    scripts = list(Path(directory, "out", "repro").glob("*valid_twin*.py"))
    assert scripts  # the report writes the line's twin script, and links it

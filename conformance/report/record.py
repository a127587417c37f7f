"""The result record: one per item and backend in results.json, one type (``ItemRecord``, held to
``schema/results.schema.json`` by tests/test_reports.py) and its builders. What is known of an item
before it runs (``item_record``) and what its verdict adds (``with_verdict``) are built here alone:
the plugin, the fuzz and the tests' trials all call them, and every reader takes the type, as it
takes ``RunDocument`` for the whole document."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, TypedDict

import numpy as np

from ..expand.items import Item, qualified_op
from ..load.documents import cited
from ..judge.catalogue import entries
from ..judge.diagnoses import Diagnosis, Model
from ..judge.verdict import Verdict
from ..expand.selectors import question_columns

SCHEMA_VERSION = 2  # of results.json and of the journal (2: a diagnosis typed, the document's catalogue)
REASON_LIMIT = 8000  # characters of a backend's whole reason (an error's text, a child's stderr) kept


class InputRecord(TypedDict):
    name: str
    shape: list[int]
    dtype: str


class ItemRecord(TypedDict, total=False):
    id: str  # Op-version/case[element type]
    case: str
    file: str
    line: int
    op: str  # as in the id: ai.onnx's bare, other domains' qualified
    domain: str
    version: int
    opset_imports: dict[str, int]
    attributes: dict[str, Any]
    inputs: list[InputRecord]
    expected: str  # literal, derived or reject
    rule: str  # a must-reject item's: the documents' sentence it breaks (document and line), else its reason
    breach: str  # a must-reject item's, where it lies outside its version's signature: how
    ambiguity: list[str]
    erratum: str | None
    path: list[str]
    backend: str
    backend_version: str
    label: str
    outcome: str  # a word of conformance/outcomes.py
    message: str
    reading: str
    readings: dict[str, list[str]]
    control: str
    twin: dict[str, str]  # id, outcome, message: the valid twin's failure, where it is no declared refusal
    diagnosis: list[dict[str, Any]]  # judge/diagnoses.py's Diagnosis.as_json: its name and models
    retyped: list[str]  # the outputs answered in another element type, each a cause beside the values'
    where: str
    undiagnosed: str
    explanation: dict[str, str]  # key, text, probed: its line's explanation by experiment, where it has one
    flaky: bool
    reason: str
    suite_error: bool
    diff: list[dict[str, Any]]
    expectation: dict[str, Any]
    repro: str
    script: str
    script_file: str
    duration_s: float


class _Backend(TypedDict):
    name: str
    version: str
    details: dict[str, str]


class BackendRecord(_Backend, total=False):
    title: str  # the runtime as sentences name it, where the backend has a title
    spec: str  # the backend as --backend named it (the repro scripts run it)


class Environment(TypedDict, total=False):
    suite_version: str
    backends: list[BackendRecord]
    onnx: str
    numpy: str
    python: str
    platform: str
    seed: int
    cases: str
    label: str  # --conformance-label


class CollectionError(TypedDict):
    node: str
    message: str


class RunDocument(TypedDict, total=False):
    """A whole results.json (what ``conformance.report.results.read_results`` returns, checked)."""
    schema_version: int
    partial: bool
    interrupted: bool
    environment: Environment
    started: str
    finished: str | None
    summary: dict[str, int]  # items per outcome
    collection_errors: list[CollectionError]
    items: list[ItemRecord]
    catalogue: dict[str, dict[str, Any]]  # the models the items name, each once (``catalogue_of``)
    fuzz: list[dict[str, Any]]  # `conformance fuzz` runs (schema's $defs/fuzz)
    explanations: list[dict[str, Any]]  # the failure lines explained by experiment (explain/lines.py)


def item_record(item: Item, case_dir: Path) -> ItemRecord:
    """What is known of an item before it runs."""
    case = item.case
    record: ItemRecord = {
        "id": item.id,
        "case": case.name,
        "file": case.file.relative_to(case_dir.parent).as_posix(),
        "line": case.line,
        "op": qualified_op(case.domain, case.op),  # as in the id: ai.onnx's bare, others with their domain
        "domain": case.domain,
        "version": item.version,
        "opset_imports": item.opset_imports,
        "attributes": {name: json_safe(value) for name, value in case.attributes.items()},
        "inputs": [{"name": i.name, "shape": list(i.shape), "dtype": i.dtype.name} for i in item.inputs],
        "expected": item.expectation,
        "ambiguity": [case.ambiguity.id] if case.ambiguity else [],
        "erratum": case.erratum["reason"] if case.erratum else None,
        "path": [] if item.inputs[0].spec.shape is None else question_columns(item),
    }
    if case.reject:  # one rule may be broken by several cases, each in its own words
        where = case.provenance
        record["rule"] = cited(where["document"], where["line"]) if where.get("line") else case.reject
        if item.breach:
            record["breach"] = item.breach
    return record


def with_verdict(record: ItemRecord, verdict: Verdict) -> ItemRecord:
    """``record`` with what ``verdict`` found: its outcome, message and open questions, and those of
    its reading, control, failed twin, reruns, readings, diagnosis, difference and whole reason that it has."""
    record["outcome"], record["message"], record["ambiguity"] = verdict.outcome.value, verdict.message, verdict.ambiguities
    if verdict.reading is not None:
        record["reading"] = verdict.reading
    if verdict.control is not None:
        record["control"] = verdict.control
    if verdict.twin is not None:
        record["twin"] = verdict.twin.as_json()
    if verdict.flaky:
        record["flaky"] = True
    if verdict.readings:
        record["readings"] = verdict.readings
    if verdict.diagnosis:
        record["diagnosis"] = [d.as_json() for d in verdict.diagnosis]
    if verdict.retyped:
        record["retyped"] = verdict.retyped
    if verdict.where:
        record["where"] = verdict.where
    if verdict.undiagnosed:
        record["undiagnosed"] = verdict.undiagnosed
    if verdict.mismatches:
        record["diff"] = [m.as_json() for m in verdict.mismatches]
    elif verdict.details.strip() and verdict.details.strip() != verdict.message:  # an error's whole text
        record["reason"] = bounded(verdict.details.strip())
    return record


def catalogue_of(records: Iterable[ItemRecord]) -> dict[str, dict[str, Any]]:
    """The catalogue entries of every model ``records`` name (in a diagnosis, or as a retyping), as
    this process's catalogue gives them: a run's document carries them once (``catalogue``)."""
    records = list(records)
    named = [m for r in records for d in r.get("diagnosis") or [] for m in Diagnosis.from_json(d).models]
    return entries(named + [Model(name) for r in records for name in r.get("retyped") or []])


def seen_line(record: ItemRecord) -> str:
    """What a run saw of an item, in one line (for its standalone script's docstring)."""
    return (f"What the suite saw on {record['backend']} {record.get('backend_version', '')}: "
            f"{record['outcome']}: {record['message'][:400]}")


def twin_seen_line(record: ItemRecord) -> str | None:
    """What a run saw of an item's valid twin, where it failed (for the twin's script's docstring)."""
    twin = record.get("twin")
    if not twin:
        return None
    return (f"What the suite saw on {record['backend']} {record.get('backend_version', '')}, as the control of "
            f"{record['id']}: {twin['outcome']}: {twin['message'][:400]}")


def bounded(text: str, limit: int = REASON_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"


def json_safe(value: Any) -> Any:
    """JSON has no infinities: an attribute's inf (activation_params) is written "inf"."""
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value

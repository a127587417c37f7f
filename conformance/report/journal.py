"""A run's journal: the records as they arrived, one JSON line each after a header line, which a
run appends to as it goes (``writer.Results``) and a killed run leaves behind; read back as the
partial document it holds (``conformance report DIR/results.journal.jsonl``)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any

from .record import SCHEMA_VERSION, Environment, ItemRecord, RunDocument, catalogue_of

JOURNAL_FILE = "results.journal.jsonl"


def document_of(env: Environment, started: str, records: list[ItemRecord], collection_errors: dict[str, str],
              partial: bool, interrupted: bool, explanations: list[dict[str, Any]] | None = None) -> RunDocument:
    document: RunDocument = {
        "schema_version": SCHEMA_VERSION,
        "partial": partial,
        "interrupted": interrupted,
        "environment": env,
        "started": started,
        "finished": None if partial else _now(),
        "summary": dict(sorted(Counter(r["outcome"] for r in records).items())),
        "collection_errors": [{"node": n, "message": m} for n, m in sorted(collection_errors.items())],
        "items": sorted(records, key=lambda r: (r["id"], r["backend"])),
        "catalogue": catalogue_of(records),
    }
    if explanations:  # the run's experiments (explain/lines.py), where it made some
        document["explanations"] = explanations
    return document


def journal_document(lines: list[str], source: str) -> RunDocument:
    """The document a journal holds: its header, then its records and collection errors in order
    (a record given twice, by a rerun, counts once, as its last). A last line cut short by a
    kill is passed over; any other line that is not the journal's raises ValueError naming it."""
    if not lines:
        raise ValueError(f"{source}: an empty journal")
    header = json.loads(lines[0])
    if not isinstance(header, dict) or header.get("journal") != SCHEMA_VERSION:
        raise ValueError(f"{source}: not a journal of the suite (its first line has no 'journal': {SCHEMA_VERSION})")
    records: dict[tuple[str, str], ItemRecord] = {}
    errors: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            entry = json.loads(line)
        except ValueError:
            if number == len(lines):  # cut short by the kill: every line before it is whole
                break
            raise ValueError(f"{source} line {number}: not JSON") from None
        if isinstance(entry, dict) and isinstance(entry.get("record"), dict):
            record = entry["record"]
            records[str(record.get("id")), str(record.get("backend"))] = record
        elif isinstance(entry, dict) and isinstance(entry.get("collection_error"), dict):
            error = entry["collection_error"]
            errors[str(error.get("node"))] = str(error.get("message"))
        else:
            raise ValueError(f"{source} line {number}: neither a record nor a collection error")
    return document_of(header.get("environment"), header.get("started"), list(records.values()), errors,  # type: ignore[arg-type]  # checked by the schema after
                     partial=True, interrupted=True)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

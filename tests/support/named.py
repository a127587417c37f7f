"""Diagnoses by name, as expectations files and report lines spell them: a verdict's (typed) and a
record's (as results.json writes them) alike."""

from __future__ import annotations

from typing import Any, Iterable


def names(found: Iterable[Any] | None) -> list[str]:
    return [d["name"] if isinstance(d, dict) else d.name for d in found or []]


def written(name: str) -> dict[str, Any]:
    """A record's diagnosis from the tests' shorthand, its name: "a+b", "a@question:reading",
    "seed_fitted:-3.4e37"."""
    from conformance.judge.diagnoses import AT, CONSTANT, SEPARATOR, Diagnosis, Model

    def model(part: str) -> Model:
        plain, _, reading = part.partition(AT)
        base, _, constant = plain.partition(CONSTANT)
        return Model(base, reading or None, constant or None)

    return Diagnosis(tuple(model(part) for part in name.split(SEPARATOR))).as_json()

"""A diagnosis as the judge hands it on, typed: the defect models that together reproduce a failed
item's outputs exactly, each with the reading of an open question it was found under and the
constant fitted for it; and the seconds a process may spend finding them. The analysis
(``analysis/``) fills it in; the verdict, the record and the expectations carry it, and the report
reads it from the record (``as_json``) with the catalogue entries the run named, never from the
analysis, so a name is never parsed back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# A diagnosis's name, as expectations files and a report's lines spell it: its models' names joined
# by SEPARATOR, each with its fitted constant after CONSTANT and its reading after AT
# ("padding_is_zero+indices_per_plane", "seed_fitted:-3.4e37", "x@ceil-window-starts-in-padding:kept").
SEPARATOR = "+"
AT = "@"
CONSTANT = ":"


@dataclass(frozen=True)
class Model:
    """One model of a diagnosis: a catalogued defect model, a retyping, or a model with a constant
    fitted from the answer."""

    name: str
    reading: str | None = None  # "question:reading": the open question's reading it reproduces under
    constant: str | None = None  # the fitted constant, spelled as its element type spells it

    @property
    def plain(self) -> str:
        """The model without the reading it was found under: the bug (the reading only says which
        answer the documents allow the runtime chose)."""
        return self.name if self.constant is None else f"{self.name}{CONSTANT}{self.constant}"

    @property
    def spelled(self) -> str:
        return self.plain if self.reading is None else f"{self.plain}{AT}{self.reading}"

    def as_json(self) -> dict[str, str]:
        extra = {k: v for k, v in (("reading", self.reading), ("constant", self.constant)) if v is not None}
        return {"model": self.name, **extra}


@dataclass(frozen=True)
class Diagnosis:
    """The models that reproduce a failure together: one bug, or several at once (a pair, a triple)."""

    models: tuple[Model, ...]

    @classmethod
    def of(cls, *names: str, reading: str | None = None) -> Diagnosis:
        """A diagnosis of catalogued models, each under ``reading`` where given."""
        return cls(tuple(Model(name, reading) for name in names))

    @property
    def name(self) -> str:
        return SEPARATOR.join(m.spelled for m in self.models)

    @property
    def plain(self) -> str:
        """The name without readings."""
        return SEPARATOR.join(m.plain for m in self.models)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "models": [m.as_json() for m in self.models]}

    @classmethod
    def from_json(cls, written: dict[str, Any]) -> Diagnosis:
        """A record's diagnosis (``as_json``; held to results.schema.json where a file is read)."""
        return cls(tuple(Model(m["model"], m.get("reading"), m.get("constant")) for m in written["models"]))


class DiagnosisBudget:
    """The seconds this process may spend diagnosing failures in a run (``--conformance-diagnosis-
    budget``; 0 turns diagnosis off): a backend that answers every item wrongly makes each about 8
    times dearer, and a run must still end. Once spent, a failure is judged as ever but left
    undiagnosed, and its record says so (``undiagnosed``)."""

    def __init__(self, seconds: float = math.inf):
        self.left = seconds

    def spent(self) -> bool:
        return self.left <= 0


BUDGET = DiagnosisBudget()

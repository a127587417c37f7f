"""Diagnosis: which defect models (``defects.py``) reproduce a failed item's outputs exactly.

For a failed item each model that can change its answer (``DefectModel.applies``) runs on the
item's model and inputs; a model whose outputs equal the backend's on every output, bit for bit
(Indices: any index of an equal maximum, as the judge compares them), diagnoses the item. Where
several do, all are named; where none does, pairs of models that override different hooks of the
reference are tried (a runtime has several bugs at once), at most ``PAIR_LIMIT`` of them. A model
is never named on a likeness: only an exact reproduction counts.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from ..expand.items import Item
from ..semantics import Readings
from .defects import DEFECTS, DefectModel, Facts

PAIR_LIMIT = 60
SEPARATOR = "+"  # a pair's name: both models' names
AT = "@"  # a model under a reading of an open question: model@question:reading


def facts(item: Item) -> Facts:
    case = item.case
    x = item.inputs[0].dtype.numpy if item.inputs else None
    upstream = case.upstream.attributes if case.upstream is not None and case.upstream.op == "MaxPool" else None
    attributes = {**(upstream or {}), **case.attributes}
    return Facts(case.op, case.domain, x, attributes, upstream is not None or any(o.positions_of for o in item.outputs),
                 any(i.name == "output_shape" for i in item.inputs), upstream is not None)


def _hooks(model: DefectModel) -> set[str]:
    return {name for name in vars(model.backend) if not name.startswith("_")}


def diagnose(item: Item, model: Any, inputs: dict[str, np.ndarray], actual: Sequence[Any],
             reproduces: Callable[[Sequence[np.ndarray], Sequence[Any]], bool],
             readings: Sequence[Readings] = ()) -> list[str]:
    """The names of the defect models that reproduce ``actual``: single models, then each under
    another reading of the item's open questions (``readings``; named ``model@question:reading``,
    the runtime's answer to the question being its own to choose), then pairs (``a+b``).
    ``reproduces`` compares a model's outputs with the backend's as the judge does."""
    relevant = [d for d in DEFECTS if d.applies(facts(item))]
    feeds = [inputs[i.name] for i in model.graph.input]

    def answers(backend) -> bool:
        try:
            outputs = backend.run_model(model, feeds)
        except Exception:  # noqa: BLE001 - a model that refuses the item reproduces no output
            return False
        return reproduces(outputs, actual)

    single = [d.name for d in relevant if answers(d.backend)]
    if single:
        return single
    read = [f"{d.name}{AT}{r}" for r in readings for d in relevant if answers(d.backend.configured(str(r)))]
    if read:
        return read
    pairs = [(a, b) for a, b in itertools.combinations(relevant, 2) if not _hooks(a) & _hooks(b)][:PAIR_LIMIT]
    return [f"{a.name}{SEPARATOR}{b.name}" for a, b in pairs
            if answers(type("Pair", (a.backend, b.backend), {}))]


def titles(diagnosis: Sequence[str]) -> list[str]:
    """Each name of a diagnosis as a report line reads it (a pair's titles joined by "and")."""
    from .defects import BY_NAME

    def title(name: str) -> str:
        model, at, reading = name.partition(AT)
        text = BY_NAME[model].title if model in BY_NAME else model
        return f"{text} (under the reading {reading})" if at else text

    return [" and ".join(title(n) for n in name.split(SEPARATOR)) for name in diagnosis]

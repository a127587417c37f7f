"""A refusal means something only against a control. When a backend refuses an item (raises), the
judge runs the item's valid twin (``conformance.expand.items.valid_twin``: a minimal valid model of
the same operator, domain, version, element type, rank, inputs and outputs), once per twin and
backend in a process. Where the backend refuses the twin too, it cannot run that operator version,
type or rank at all (an opset or IR version it predates, a rank its kernels lack), and the item
is ``unsupported``, with both refusals: never an ``error``, never the pass of a must-reject item,
never a reading of an open question. A twin is valid by the oracle's word: the reference backend
runs it; where the item's own rank is what makes it invalid (OpenVINO's 6-D input), its twin is
of rank 4."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ..backends import Backend, IsolationFailed, malformed
from ..expand.items import Item, valid_twin
from .ambiguities import answer


@dataclass(frozen=True)
class TwinRefused:
    twin: str  # the valid twin's id
    message: str  # the backend's words refusing it


# backend (by id, held so that the id stays its own) -> twin id -> the refusal, or None where it ran
_ANSWERS: dict[int, tuple[Backend, dict[str, TwinRefused | None]]] = {}
_VALID: dict[str, bool] = {}  # twin id -> whether the reference runs it
FALLBACK_RANK = 4


def run_on_copies(backend: Backend, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Any:
    """The backend's answer to copies of the model and inputs: a backend that writes into them
    changes neither what the judge reads nor what the next backend gets."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return backend.run(copy, {name: array.copy() for name, array in inputs.items()})


def refused_twin(item: Item, backend: Backend, seed: int) -> TwinRefused | None:
    """How the backend fails to run the item's valid twin (a refusal, a crash, a timeout, garbage),
    or None where it runs it or the item has none."""
    twin = twin_of(item, seed)
    if twin is None:
        return None
    held = _ANSWERS.setdefault(id(backend), (backend, {}))[1]
    if twin.id not in held:
        held[twin.id] = _refusal(twin, backend, seed)
    return held[twin.id]


def twin_of(item: Item, seed: int) -> Item | None:
    """The item's valid twin at its own rank, or at rank 4 where the reference refuses that one."""
    for rank in dict.fromkeys([max(len(item.inputs[0].shape), 3), FALLBACK_RANK]):
        twin = valid_twin(item, rank)
        if twin is not None:
            if twin.id not in _VALID:
                _VALID[twin.id] = answer(twin, twin.make_inputs(seed)).outputs is not None
            if _VALID[twin.id]:
                return twin
    return None


def _refusal(twin: Item, backend: Backend, seed: int) -> TwinRefused | None:
    try:
        outputs = run_on_copies(backend, twin.model, twin.make_inputs(seed))
    except IsolationFailed:  # the suite's failure, not the backend's: the item says so itself
        return None
    except Exception as e:  # noqa: BLE001 - any refusal, Unsupported included; a crash, a timeout or
        # garbage too: a backend that does not run its valid twin proves nothing by refusing the item
        text = str(e).strip()
        return TwinRefused(twin.id, f"{getattr(e, 'type_name', type(e).__name__)}: {text.splitlines()[0] if text else ''}")
    problem = malformed(outputs)
    return None if problem is None else TwinRefused(twin.id, f"returned garbage: {problem}")

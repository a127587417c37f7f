"""A refusal means something only against a control, and only a declared refusal is one. When a
backend refuses an item (raises), crashes or hangs on it, the judge runs the item's valid twin
(``conformance.expand.items.valid_twin``: a minimal valid model of the same operator, domain,
version, element type, rank, inputs and outputs), once per twin and backend in a process.

- The twin runs: the twin is a control, and the item's refusal is judged (a must-reject item's
  pass, a valid item's error, the ``refused`` reading of an open question).
- The backend declares that it cannot run the twin (``Unsupported``, or ``NotImplementedError``,
  which ``run_on_copies`` reads as one; the adapters raise ``Unsupported`` for an onnx Backend's
  ``is_compatible() == False`` and for the refusals their ``CAPABILITIES`` tables classify): it
  cannot run that operator version, type or rank at all, and a refused item is ``unsupported``,
  with both refusals.
- Anything else on the twin (a crash, a timeout, a panic, garbage, any other exception) is a bug
  on a valid model, never ``unsupported``: the item is judged on its own (an ``error``, ``crash``
  or ``timeout``) and carries the twin's failure, whose line the report names "fails on the
  minimal valid model".

A twin is valid by the oracle's word: the reference backend runs it; where the item's own rank is
what makes it invalid (OpenVINO's 6-D input), its twin is of rank 4."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ..backends import (Backend, BackendCrashed, BackendGarbage, BackendTimedOut, IsolationFailed, RaisedInBackend,
                        Unsupported, malformed)
from ..expand.items import Item, valid_twin
from ..outcomes import Outcome
from .ambiguities import answer


@dataclass(frozen=True)
class TwinFailed:
    """How a backend failed the valid twin of an item."""

    twin: str  # the valid twin's id
    message: str  # the backend's words, one line
    # what the twin ended as, judged on its own: UNSUPPORTED for a declared refusal, else ERROR,
    # CRASH or TIMEOUT (a bug on a valid model)
    outcome: Outcome

    @property
    def declared(self) -> bool:
        """The backend said it cannot run the twin: the twin is a control for the item's refusal."""
        return self.outcome is Outcome.UNSUPPORTED

    def as_json(self) -> dict[str, str]:
        return {"id": self.twin, "outcome": self.outcome.value, "message": self.message}


# backend (by id, held so that the id stays its own) -> twin id -> its failure, or None where it ran
_ANSWERS: dict[int, tuple[Backend, dict[str, TwinFailed | None]]] = {}
_VALID: dict[str, bool] = {}  # twin id -> whether the reference runs it
FALLBACK_RANK = 4


def run_on_copies(backend: Backend, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Any:
    """The backend's answer to copies of the model and inputs: a backend that writes into them
    changes neither what the judge reads nor what the next backend gets. A ``NotImplementedError``
    is the interface's other way to declare what it cannot run (in the backend's process, or
    carried back from its child): ``Unsupported``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    try:
        return backend.run(copy, {name: array.copy() for name, array in inputs.items()})
    except NotImplementedError as e:
        raise Unsupported(f"NotImplementedError: {_one_line(e)}") from None
    except RaisedInBackend as e:
        if e.type_name == NotImplementedError.__name__:
            raise Unsupported(f"NotImplementedError: {_one_line(e)}") from None
        raise


def failed_twin(item: Item, backend: Backend, seed: int) -> TwinFailed | None:
    """How the backend fails to run the item's valid twin (a declared refusal, a crash, a timeout,
    garbage, any other exception), or None where it runs it or the item has none."""
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


def _refusal(twin: Item, backend: Backend, seed: int) -> TwinFailed | None:
    try:
        outputs = run_on_copies(backend, twin.model, twin.make_inputs(seed))
    except IsolationFailed:  # the suite's failure, not the backend's: the item says so itself
        return None
    except Unsupported as e:
        return TwinFailed(twin.id, _one_line(e), Outcome.UNSUPPORTED)
    except BackendCrashed as e:
        return TwinFailed(twin.id, str(e), Outcome.CRASH)
    except BackendTimedOut as e:
        return TwinFailed(twin.id, str(e), Outcome.TIMEOUT)
    except BackendGarbage as e:
        return TwinFailed(twin.id, f"returned garbage: {e}", Outcome.ERROR)
    except Exception as e:  # noqa: BLE001 - a panic, an internal error, an AttributeError: a bug, no refusal
        return TwinFailed(twin.id, f"{getattr(e, 'type_name', type(e).__name__)}: {_one_line(e)}", Outcome.ERROR)
    problem = malformed(outputs)
    return None if problem is None else TwinFailed(twin.id, f"returned garbage: {problem}", Outcome.ERROR)


def first_line(text: str, default: str = "") -> str:
    """The first non-blank line of ``text``, whole (displays shorten it)."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), default)


def _one_line(e: BaseException) -> str:
    return first_line(str(e))

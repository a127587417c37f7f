"""What the judge knows of an item before any backend answers: its model, its inputs at the
seed, the expected outputs (literal, or derived by the reference backend), the reference's answer
and the open questions the item runs into, with the other readings' answers.

All of it depends on the item, the seed and the reference alone, and costs more than most
backends take to run the item; a run keeps it (``conformance.expand.cache.ItemValues``) for the
next one. What is read back is checked for the form this module writes, and for derived
expectations of the bundled cases against the lock as always; anything else is computed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ..expand.items import Item
from ..load.cases import Ambiguity
from .ambiguities import Answer, Questions, answer, questions


@dataclass
class Oracle:
    model: onnx.ModelProto
    written: dict[str, np.ndarray]  # the inputs as the case writes them, channels-first
    expected: dict[str, np.ndarray]
    default: Answer | None  # the reference's answer, where a derived output needed it
    found: Questions


class SuiteError(Exception):
    """The suite itself is wrong (the reference cannot compute a derived expectation)."""


def consult(item: Item, seed: int, registry: dict[str, Ambiguity], store=None) -> Oracle:
    """The item's oracle at ``seed``: from ``store`` (an ItemValues) where it holds it, else
    computed (and put there)."""
    if store is not None:
        kept = _from_plain(item, store.get(item.case.file, item.id))
        if kept is not None:
            return kept
    written = item.case_inputs(seed)
    inputs = item.to_model(written)
    expected, default = derive(item, inputs)
    found = questions(item, written, registry, default)
    oracle = Oracle(item.model, written, expected, default, found)
    if store is not None:
        store.put(item.case.file, item.id, _to_plain(item, oracle))
    return oracle


# an item's inputs as the model takes them, and its expected outputs (None: it must be refused)
ScriptValues = tuple[dict[str, np.ndarray], "dict[str, np.ndarray] | None"]


def script_values(item: Item, seed: int, registry: dict[str, Ambiguity], store=None) -> ScriptValues:
    """What an item's standalone script shows (``conformance.scripts``): its inputs as the model
    takes them at ``seed``, and its expected outputs (None for an item that must be refused),
    read from ``store`` where the run kept its oracle."""
    if item.case.reject:
        return item.make_inputs(seed), None
    oracle = consult(item, seed, registry, store)
    return item.to_model(oracle.written), oracle.expected


class LastComputed:
    """A store for :func:`consult` that reads nothing back and keeps the last oracle computed: for
    a caller that judges item after item and keeps the values of a few (the fuzz, its clusters'
    scripts), without computing them again."""

    def __init__(self) -> None:
        self.last: tuple[str, Any] | None = None

    def get(self, file, item_id: str) -> None:
        return None

    def put(self, file, item_id: str, value: Any) -> None:
        self.last = item_id, value

    def script_values(self, item: Item, seed: int) -> ScriptValues:
        """The values of ``item``, judged last at ``seed``."""
        if item.case.reject:
            return item.make_inputs(seed), None
        kept = _from_plain(item, self.last[1]) if self.last is not None and self.last[0] == item.id else None
        assert kept is not None, f"{item.id} was not the item judged last"
        return item.to_model(kept.written), kept.expected


def derive(item: Item, inputs: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], Answer | None]:
    """The expected outputs, and the reference backend's answer (run through the backend
    interface) where a derived output needed it (else None)."""
    expected: dict[str, Any] = {o.name: o.expected for o in item.outputs}
    if all(value is not None for value in expected.values()):
        return expected, None
    derived = answer(item, inputs)
    if derived.outputs is None:
        raise SuiteError(f"the reference backend cannot derive {item.id}: {derived.refusal}")
    for output, value in zip(item.outputs, derived.outputs):
        if output.shape is not None and value.shape != output.shape:
            raise SuiteError(f"{item.id}: the reference backend gives {output.name} the shape {list(value.shape)}, "
                             f"the case documents {list(output.shape)}")
        if expected[output.name] is None:
            expected[output.name] = value
    return expected, derived


def _to_plain(item: Item, oracle: Oracle) -> dict[str, Any]:
    return {
        "model": np.frombuffer(oracle.model.SerializeToString(), np.uint8),
        "written": oracle.written,
        "derived": {o.name: oracle.expected[o.name] for o in item.outputs if o.expected is None},
        "default": _answer_to_plain(oracle.default) if oracle.default is not None else None,
        "ids": oracle.found.ids,
        "alternatives": {key: {reading: _answer_to_plain(a) for reading, a in answers.items()}
                         for key, answers in oracle.found.alternatives.items()},
    }


def _answer_to_plain(a: Answer) -> tuple:
    return a.outputs, a.refusal


def _from_plain(item: Item, value: Any) -> Oracle | None:
    """The Oracle that ``_to_plain`` wrote for this item, or None for anything else."""
    if not (isinstance(value, dict) and sorted(value) == ["alternatives", "default", "derived", "ids", "model", "written"]):
        return None
    model_bytes, written, derived = value["model"], value["written"], value["derived"]
    if not (_array_of(model_bytes, np.dtype(np.uint8), None) and isinstance(written, dict) and isinstance(derived, dict)):
        return None
    if sorted(written) != sorted(p.name for p in item.inputs) or not all(
            _array_of(written[p.name], p.dtype.numpy, p.spec.shape) for p in item.inputs):
        return None
    wanted = [o for o in item.outputs if o.expected is None]
    if sorted(derived) != sorted(o.name for o in wanted) or not all(
            _array_of(derived[o.name], o.dtype.numpy, o.shape) for o in wanted):
        return None
    default = _answer_from_plain(value["default"]) if value["default"] is not None else None
    if (value["default"] is not None and default is None) or (wanted and default is None):
        return None
    ids, alternatives = value["ids"], value["alternatives"]
    if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids) and isinstance(alternatives, dict)):
        return None
    found = Questions(ids)
    for key, answers in alternatives.items():
        if not (isinstance(key, str) and isinstance(answers, dict)):
            return None
        found.alternatives[key] = {}
        for reading, plain in answers.items():
            read = _answer_from_plain(plain)
            if not isinstance(reading, str) or read is None:
                return None
            found.alternatives[key][reading] = read
    try:
        model = onnx.ModelProto.FromString(model_bytes.tobytes())
    except Exception:  # noqa: BLE001 - protobuf's DecodeError, or anything else a planted file provokes
        return None
    expected = {o.name: o.expected if o.expected is not None else derived[o.name] for o in item.outputs}
    return Oracle(model, written, expected, default, found)


def _answer_from_plain(value: Any) -> Answer | None:
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)):
        return None
    outputs, refusal = value
    if outputs is None:
        return Answer(None, refusal)
    if isinstance(outputs, tuple) and all(isinstance(o, np.ndarray) for o in outputs):
        return Answer(outputs, refusal)
    return None


def _array_of(value: Any, dtype: np.dtype, shape: tuple[int, ...] | None) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == dtype and (shape is None or value.shape == tuple(shape))

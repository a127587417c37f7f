"""Which open questions of the documents an item runs into, and what each reading answers.

An item runs into a question when the readings of the question give different outputs (values,
shapes or element types) or a different acceptance for it: the reference backend (imported from
its own package, run through the backend interface as ``reference[readings=question:reading]``) answers for each reading (see
``conformance.semantics``). A documented example may also name its question itself (``ambiguity:``
in the case). Items with an open question are ``divergent`` on every backend, so a case class may
range freely without ever failing a backend on a question the documents leave open.

Running every reading on every item would cost a reference run per reading and item; a cheap
test first rules out the questions whose readings cannot differ for an item (``_may_differ``),
and only the others are run.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, Callable

import numpy as np

from reference_backend import ReferenceBackend

from ..backends import Backend, OnnxBackendAdapter
from ..expand.items import Item, qualified_op
from ..load.cases import Ambiguity
from .compare import same_bits
from ..semantics import (DEFAULT, OPENVINO_DOMAIN, QUESTIONS, GeometryError, Readings, alternatives, has_empty_window,
                         node_axes)

Inputs = dict[str, np.ndarray]


@dataclass(frozen=True)
class Answer:
    """What the reference gives under some readings: outputs, or the refusal of the model."""

    outputs: tuple[np.ndarray, ...] | None
    refusal: str = ""

    def same_as(self, other: "Answer") -> bool:
        if self.outputs is None or other.outputs is None:
            return self.outputs is None and other.outputs is None
        return len(self.outputs) == len(other.outputs) and all(
            a.dtype == b.dtype and a.shape == b.shape and bool(same_bits(a, b).all())
            for a, b in zip(self.outputs, other.outputs))


@dataclass
class Questions:
    """The questions an item runs into, and for each open one the answers of its other readings."""

    ids: list[str]
    alternatives: dict[str, dict[str, Answer]] = field(default_factory=dict)


@cache
def reference(readings: Readings = DEFAULT) -> Backend:
    """The reference backend following ``readings``, through the backend interface: imported from
    its own package, never looked up in the registry that backends under test use, so that no
    package registering the name ``reference`` can stand in for the oracle."""
    oracle = ReferenceBackend.configured(str(readings)) if readings.differing() else ReferenceBackend
    name = f"reference[readings={readings}]" if readings.differing() else "reference"
    return OnnxBackendAdapter(oracle, name=name, device="CPU")


def answer(item: Item, inputs: Inputs, readings: Readings = DEFAULT) -> Answer:
    try:
        return Answer(tuple(reference(readings).run(item.model, inputs)))
    except Exception as e:  # noqa: BLE001 - a refusal is the answer of a reading that rejects the model
        return Answer(None, f"{type(e).__name__}: {e}")


def questions(item: Item, written: Inputs, registry: dict[str, Ambiguity],
              default: Answer | None = None) -> Questions:
    """The questions of ``item`` (``written``: its inputs as the case writes them); ``default``:
    the reference's answer, if already known."""
    case = item.case
    tagged = case.ambiguity.id if case.ambiguity else None
    found = Questions([tagged] if tagged else [])
    if case.reject:
        return found
    inputs, view = item.to_model(written), _View(item, written)
    for key in QUESTIONS:
        entry = registry.get(key)
        if entry is None or entry.status != "open" or not (key == tagged or _may_differ(key, view)):
            continue
        if default is None:
            default = answer(item, inputs)
        expected = case.expected_reading if key == tagged else QUESTIONS[key][0]
        others = {reading: answer(item, inputs, Readings({key: reading}))
                  for reading in QUESTIONS[key] if reading != expected}
        differing = {reading: a for reading, a in others.items() if key == tagged or not a.same_as(default)}
        if differing:
            found.alternatives[key] = differing
            if key != tagged:
                found.ids.append(key)
    return found


def detected(item: Item, written: Inputs, registry: dict[str, Ambiguity]) -> list[str]:
    return questions(item, written, registry).ids


def combined_readings(item: Item, found: Questions, registry: dict[str, Ambiguity], limit: int = 24) -> list[Readings]:
    """Readings of two or more questions at once, for naming what a backend shows when no single
    other reading does: the item's questions crossed with those that leave only values open
    (``shapes_settled``) at its operator version, which another reading's windows can bring in
    (OpenVINO's extra same window under ceil holds no element, for one)."""
    op_version = f"{qualified_op(item.case.domain, item.case.op)}-{item.version}"
    companions = [key for key, entry in registry.items() if key in QUESTIONS and key not in found.alternatives
                  and entry.status == "open" and entry.entry.get("shapes_settled") and op_version in entry.entry["versions"]]
    # Pairs first (one of the item's own questions with any other), then larger combinations.
    own = [(key, r) for key in found.alternatives for r in alternatives(key)]
    others = [(key, r) for key in [*found.alternatives, *companions] for r in alternatives(key)]
    combined = {str(r): r for r in (Readings({k1: r1, k2: r2}) for k1, r1 in own for k2, r2 in others if k2 != k1)}
    choices = [[(key, r) for r in QUESTIONS[key]] for key in [*found.alternatives, *companions]]
    for choice in itertools.product(*choices):
        if len(combined) >= limit:
            break
        readings = Readings(dict(choice))
        if len(readings.differing()) >= 3:
            combined.setdefault(str(readings), readings)
    return list(combined.values())[:limit]


# The cheap tests: False only where the question's readings cannot give different answers.

class _View:
    """What the cheap tests read of an item, each computed once."""

    def __init__(self, item: Item, written: Inputs):
        self.item, self.written = item, written
        case = item.case
        # (domain, attributes, X's shape), or None where the item pools nothing (Any: the checks
        # that read it run only after asking whether it is set)
        self.pooling: Any = None
        if case.op in ("MaxPool", "NhwcMaxPool"):
            self.pooling = case.domain, case.attributes, item.inputs[0].spec.shape
        elif case.upstream and case.upstream.op == "MaxPool":  # a round trip: its MaxPool's questions
            self.pooling = "ai.onnx", case.upstream.attributes, item.inputs[0].spec.shape
        self.openvino = bool(self.pooling) and self.pooling[0] == OPENVINO_DOMAIN

    def axes(self, readings: Readings = DEFAULT):
        try:
            return node_axes(self.pooling[0], self.pooling[1], self.pooling[2][2:], readings)
        except (GeometryError, KeyError, TypeError):
            return None

    @cached_property
    def default_axes(self):
        return self.axes() if self.pooling else None

    @cached_property
    def floats(self) -> np.ndarray | None:
        """X as float64, for a MaxPool of a floating type."""
        if self.pooling is None or self.item.inputs[0].dtype.is_integer:
            return None
        return self.written[self.item.inputs[0].name].astype(np.float64)


def _geometry_differs(key: str, view: _View) -> bool:
    if view.pooling is None or view.openvino != key.startswith("openvino"):
        return False
    return any(view.axes(Readings({key: r})) != view.default_axes for r in alternatives(key))


def _empty_window(view: _View, openvino: bool) -> bool:
    return view.openvino == openvino and bool(view.default_axes) and has_empty_window(view.default_axes)


def _both_zeros(x: np.ndarray) -> bool:
    zeros = np.signbit(x[x == 0])
    return bool(zeros.any() and (~zeros).any())


def _column_major_over_planes(view: _View) -> bool:
    wants_indices = any(o.positions_of for o in view.item.outputs) or view.item.case.upstream is not None
    return bool(view.pooling) and wants_indices and view.pooling[1].get("storage_order", 0) == 1 and \
        int(np.prod(view.pooling[2][:2])) > 1


def _unpool_with_output_shape(view: _View) -> bool:
    return view.item.case.op == "MaxUnpool" and "output_shape" in view.written


def _auto_pad(view: _View) -> str | None:
    return view.pooling[1].get("auto_pad", "NOTSET") if view.pooling else None


_PREFILTERS: dict[str, Callable[[_View], bool]] = {
    "window-in-padding-only": lambda view: _empty_window(view, openvino=False),
    "openvino-window-without-element": lambda view: _empty_window(view, openvino=True),
    "nan-in-window": lambda view: view.floats is not None and bool(np.isnan(view.floats).any()),
    "signed-zero-tie": lambda view: view.floats is not None and _both_zeros(view.floats),
    "storage-order-scope": _column_major_over_planes,
    "maxunpool-output-shape-index-space": _unpool_with_output_shape,
    "maxunpool-output-shape-smaller": _unpool_with_output_shape,
    "maxunpool-output-shape-batch-channels": _unpool_with_output_shape,
    "maxunpool-duplicate-indices": lambda view: view.item.case.op == "MaxUnpool",
    "nhwc-activation-8-bit": lambda view: "activation" in view.item.case.attributes and view.item.inputs[0].dtype.is_integer,
    "pads-with-auto-pad": lambda view: _auto_pad(view) not in (None, "NOTSET", "") and "pads" in view.pooling[1],
    "auto-pad-empty-string": lambda view: _auto_pad(view) == "",
}


def _may_differ(key: str, view: _View) -> bool:
    """Whether the readings of ``key`` may answer the item differently; questions of the window
    geometry compare the windows each reading gives, which costs no kernel run."""
    prefilter = _PREFILTERS.get(key)
    return prefilter(view) if prefilter else _geometry_differs(key, view)

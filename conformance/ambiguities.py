"""Which open questions of the documents an item runs into, and what each reading answers.

An item runs into a question when the readings of the question give different outputs (values,
shapes or element types) or a different acceptance for it: the reference backend, loaded through
the backend interface as ``reference[readings=question:reading]``, answers for each reading (see
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
from functools import cache
from typing import Callable

import numpy as np

from .backends import Backend, load_backend
from .cases import Ambiguity
from .expand import Item, qualified_op
from .semantics import DEFAULT, OPENVINO_DOMAIN, QUESTIONS, GeometryError, Readings, has_empty_window, node_axes

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
            a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))
            for a, b in zip(map(np.ascontiguousarray, self.outputs), map(np.ascontiguousarray, other.outputs)))


@dataclass
class Questions:
    """The questions an item runs into, and for each open one the answers of its other readings."""

    ids: list[str]
    alternatives: dict[str, dict[str, Answer]] = field(default_factory=dict)


@cache
def reference(readings: Readings = DEFAULT) -> Backend:
    """The reference backend following ``readings``, through the backend interface."""
    return load_backend(f"reference[readings={readings}]" if readings.differing() else "reference")


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
    inputs = item.to_model(written)
    for key in QUESTIONS:
        entry = registry.get(key)
        if entry is None or entry.status != "open" or not (key == tagged or _may_differ(key, item, written)):
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


def combined_readings(item: Item, found: Questions, registry: dict[str, Ambiguity], limit: int = 16) -> list[Readings]:
    """Readings of two or more questions at once, for naming what a backend shows when no single
    other reading does: the item's questions crossed with those that leave only values open
    (``shapes_settled``) at its operator version, which another reading's windows can bring in
    (OpenVINO's extra same window under ceil holds no element, for one)."""
    op_version = f"{qualified_op(item.case.domain, item.case.op)}-{item.version}"
    companions = [key for key, entry in registry.items() if key in QUESTIONS and key not in found.alternatives
                  and entry.status == "open" and entry.entry.get("shapes_settled") and op_version in entry.entry["versions"]]
    choices = [[(key, r) for r in QUESTIONS[key]] for key in found.alternatives] + \
              [[(key, r) for r in QUESTIONS[key]] for key in companions]
    combined = [Readings(dict(choice)) for choice in itertools.product(*choices)]
    return [r for r in combined if len(r.differing()) >= 2][:limit]


# The cheap tests: False only where the question's readings cannot give different answers.

def _pooling(item: Item) -> tuple[str, dict, tuple[int, ...]] | None:
    """(domain, attributes, input shape) of the item's MaxPool node, or of its upstream MaxPool."""
    case = item.case
    if case.op in ("MaxPool", "NhwcMaxPool"):
        return case.domain, case.attributes, item.inputs[0].spec.shape
    if case.upstream and case.upstream.op == "MaxPool":
        return "ai.onnx", case.upstream.attributes, item.inputs[0].spec.shape
    return None


def _geometry_differs(key: str, item: Item, written: Inputs) -> bool:
    pooling = _pooling(item)
    if pooling is None:
        return False
    domain, attributes, shape = pooling
    if (domain == OPENVINO_DOMAIN) != key.startswith("openvino"):
        return False
    results = []
    for readings in [DEFAULT] + [Readings({key: r}) for r in QUESTIONS[key][1:]]:
        try:
            results.append(node_axes(domain, attributes, shape[2:], readings))
        except (GeometryError, KeyError, TypeError):
            results.append(None)
    return any(r != results[0] for r in results[1:])


def _empty_window(item: Item, openvino: bool) -> bool:
    pooling = _pooling(item)
    if not pooling or (pooling[0] == OPENVINO_DOMAIN) != openvino:
        return False
    try:
        return has_empty_window(node_axes(pooling[0], pooling[1], pooling[2][2:]))
    except (GeometryError, KeyError, TypeError):
        return False


def _floats(item: Item, written: Inputs, test: Callable[[np.ndarray], bool]) -> bool:
    if _pooling(item) is None or item.inputs[0].dtype.is_integer:
        return False
    return test(written[item.inputs[0].name].astype(np.float64))


def _both_zeros(x: np.ndarray) -> bool:
    zeros = np.signbit(x[x == 0])
    return bool(zeros.any() and (~zeros).any())


def _column_major_over_planes(item: Item, written: Inputs) -> bool:
    pooling = _pooling(item)
    wants_indices = any(o.positions_of for o in item.outputs) or item.case.upstream is not None
    return bool(pooling) and wants_indices and pooling[1].get("storage_order", 0) == 1 and \
        int(np.prod(pooling[2][:2])) > 1


def _unpool_with_output_shape(item: Item, written: Inputs) -> bool:
    return item.case.op == "MaxUnpool" and "output_shape" in written


_PREFILTERS: dict[str, Callable[[Item, Inputs], bool]] = {
    "window-in-padding-only": lambda item, written: _empty_window(item, openvino=False),
    "openvino-window-without-element": lambda item, written: _empty_window(item, openvino=True),
    "nan-in-window": lambda item, written: _floats(item, written, lambda x: bool(np.isnan(x).any())),
    "signed-zero-tie": lambda item, written: _floats(item, written, _both_zeros),
    "storage-order-scope": _column_major_over_planes,
    "maxunpool-output-shape-index-space": _unpool_with_output_shape,
    "maxunpool-output-shape-smaller": _unpool_with_output_shape,
    "maxunpool-output-shape-batch-channels": _unpool_with_output_shape,
    "maxunpool-duplicate-indices": lambda item, written: item.case.op == "MaxUnpool",
    "nhwc-activation-8-bit": lambda item, written: "activation" in item.case.attributes and item.inputs[0].dtype.is_integer,
    "pads-with-auto-pad": lambda item, written: bool(_pooling(item)) and "pads" in _pooling(item)[1]
    and _pooling(item)[1].get("auto_pad", "NOTSET") not in ("NOTSET", ""),
    "auto-pad-empty-string": lambda item, written: bool(_pooling(item)) and _pooling(item)[1].get("auto_pad") == "",
}


def _may_differ(key: str, item: Item, written: Inputs) -> bool:
    """Whether the readings of ``key`` may answer ``item`` differently; questions of the window
    geometry compare the windows each reading gives, which costs no kernel run."""
    prefilter = _PREFILTERS.get(key)
    return prefilter(item, written) if prefilter else _geometry_differs(key, item, written)

"""Stage 4 of the pipeline: run one item on a backend and judge what came back.

Values compare bit for bit (any NaN matches any NaN), shapes and element types strictly. An
output that holds positions (MaxPool's Indices) is checked for what it means, so that a backend
may break ties differently: each index must point inside its window, not into padding, at an
element equal to the expected maximum.
"""

from __future__ import annotations

import dataclasses
import itertools
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..backends import (Backend, BackendCrashed, BackendGarbage, BackendLost, BackendTimedOut, IsolationFailed,
                        RaisedInBackend, Unsupported, malformed, process_output)
from ..expand.items import Item, ItemOutput, stored_shape
from ..load.cases import Ambiguity, inert
from ..outcomes import Outcome
from ..semantics import OPENVINO_DOMAIN, Readings, from_storage_order, node_axes, openvino_bound
from . import undefined
from .ambiguities import Questions, answer, combined_readings
from .control import TwinFailed, failed_twin, first_line, run_on_copies
from .diagnosis import SEPARATOR, diagnose
from .equality import same_bits
from .retyping import Retyped, factored
from .where import differences_lie
from .oracle import SuiteError, consult, derive

SHOWN_MISMATCHES = 8
UNDIAGNOSED = "the diagnosis budget of the run was spent (--conformance-diagnosis-budget)"


@dataclass
class Mismatch:
    """One way an output differs: a summary, the first differing positions, and where it differs
    on the first 2-D plane that does ("x" differs, "." agrees; at most 32 x 32 shown)."""

    output: str
    summary: str
    shown: list[str] = field(default_factory=list)
    plane: list[int] | None = None
    mask: list[str] | None = None
    of_form: bool = False  # a wrong element type or shape, rather than wrong values

    def text(self) -> str:
        return "\n".join([self.summary] + [f"  {line}" for line in self.shown])

    def line(self) -> str:
        return f"{self.summary}; {self.shown[0]}" if self.shown else self.summary

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v not in (None, []) and k != "of_form"}


@dataclass
class Verdict:
    outcome: Outcome
    message: str  # one line
    details: str = ""  # the readable diff
    ambiguities: list[str] = field(default_factory=list)  # registry ids the item runs into
    mismatches: list[Mismatch] = field(default_factory=list)
    reading: str | None = None  # divergent: the reading observed ("refused", "not <reading>", or its name)
    # divergent: per open question, the readings the outputs are consistent with (two readings can
    # give an item the same outputs), so that a report can tell one reading from two per question
    readings: dict[str, list[str]] = field(default_factory=dict)
    control: str | None = None  # unsupported: the valid twin the backend declared it cannot run too
    # error, crash, timeout: the valid twin failed too, in a way that is no declared refusal (a bug
    # on the minimal valid model: the item's line is the twin's)
    twin: TwinFailed | None = None
    flaky: bool = False  # a crash that some rerun of the item did not meet (--conformance-rerun-crashes)
    # fail: the defect models that reproduce the backend's outputs exactly (judge/diagnosis.py)
    diagnosis: list[str] = field(default_factory=list)
    # fail, undiagnosed: the class of input window every wrong element's shares (judge/where.py)
    where: str | None = None
    undiagnosed: str | None = None  # fail: why no diagnosis was tried (the run's diagnosis budget spent)
    # fail: the outputs answered in another element type whose values survive the cast back, each
    # a cause of its own beside the values' (judge/retyping.py)
    retyped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        """What a backend said reaches terminals and reports inert: no escape sequence, no control."""
        self.message, self.details = inert(self.message), inert(self.details)


def evaluate(item: Item, backend: Backend, seed: int, registry: dict[str, Ambiguity], lock=None,
             store=None) -> Verdict:
    """``lock`` (a :class:`conformance.judge.lock.Lock`): check each derived expectation against it first;
    ``store`` (a :class:`conformance.expand.cache.ItemValues`): where the item's oracle is kept between runs."""
    if item.case.reject:
        question = item.case.ambiguity if item.case.ambiguity and item.case.ambiguity.status == "open" else None
        return _judge_rejection(item, backend, seed, question)
    oracle = consult(item, seed, registry, store)
    written, expected, found = oracle.written, oracle.expected, oracle.found  # written: channels-first, as the case writes them
    inputs = item.to_model(written)
    if lock is not None and oracle.default is not None:
        lock.verify(item, expected)
    ambiguities = list(found.ids)
    open_ones = [registry[key] for key in ambiguities if registry[key].status == "open"]
    try:
        actual = run_on_copies(backend, oracle.model, inputs)
    except Unsupported as e:
        return Verdict(Outcome.UNSUPPORTED, first_line(str(e)), str(e), ambiguities)
    except IsolationFailed as e:
        raise SuiteError(str(e)) from None
    except (BackendLost, BackendGarbage) as e:
        return _beside_twin(_lost_or_garbage(e, ambiguities), item, backend, seed)
    except Exception as e:  # noqa: BLE001 - every failure of a backend is a result
        summary = f"{_type_name(e)}: {first_line(str(e))}"
        twin = failed_twin(item, backend, seed)
        if twin is not None:  # no control: declared, it cannot run this version, type or rank at all; else a bug
            return _against_failed_twin(twin, summary, _exception_text(e), ambiguities)
        if any("rejected" in a.interpretations for a in open_ones):  # a reading the registry names
            return Verdict(Outcome.DIVERGENT, f"observed: refused ({summary})", _exception_text(e), ambiguities,
                           reading="refused", readings={a.id: ["refused"] for a in open_ones})
        return Verdict(Outcome.ERROR, summary, _exception_text(e), ambiguities)
    problem = malformed(actual)
    if problem is None and len(actual) != len(item.outputs):
        problem = (f"returned {len(actual)} outputs for a node with {len(item.outputs)} "
                   f"({', '.join(o.name for o in item.outputs)})")
    if problem:
        return Verdict(Outcome.ERROR, f"returned garbage: {problem}", problem, ambiguities)

    # a wrong element type whose values survive the cast back is a cause of its own: the values
    # are judged as if the type were right, and the verdict then carries both (judge/retyping.py)
    names, wanted = [o.name for o in item.outputs], [expected[o.name] for o in item.outputs]
    actual, retyped = factored(names, wanted, actual)
    verdict = _judged_values(item, oracle, inputs, actual, registry,
                             rerun=lambda: factored(names, wanted, run_on_copies(backend, oracle.model, inputs))[0])
    return with_retyping(verdict, retyped) if retyped else verdict


def _judged_values(item: Item, oracle: Any, inputs: dict[str, np.ndarray], actual: Sequence[Any],
                   registry: dict[str, Ambiguity], rerun: Callable[[], Sequence[Any]]) -> Verdict:
    """The verdict on ``actual``, the backend's outputs of the element types the documents give
    (``rerun``: the backend's answer again, for values the documents leave undefined)."""
    written, expected, found = oracle.written, oracle.expected, oracle.found
    ambiguities = list(found.ids)
    open_ones = [registry[key] for key in ambiguities if registry[key].status == "open"]
    mismatches = compare(item, written, expected, actual)
    details = "\n".join(m.text() for m in mismatches)

    def failed(message: str) -> Verdict:
        """A fail, diagnosed by the defect models that reproduce these outputs exactly, except where
        the documents leave the value undefined (a window without elements): a model is not named
        for an answer any value would be."""
        undefined_at = None
        if undefined.questions_of(found, registry) and actual and isinstance(actual[0], np.ndarray):
            undefined_at = undefined.empty_windows(item, found, actual[0].shape)

        def settled(want: np.ndarray, got: Any) -> np.ndarray:
            """``want`` with the backend's values where the documents leave them undefined."""
            if (undefined_at is None or not undefined_at.any() or not isinstance(got, np.ndarray)
                    or not want.shape == got.shape == undefined_at.shape or want.dtype != got.dtype):
                return want
            return np.where(undefined_at, got, want)

        def reproduces(outputs: Sequence[np.ndarray], got: Sequence[Any]) -> bool:
            return _matches(item, written, [settled(want, have) for want, have in zip(outputs, got)], got)
        readings = [Readings({key: reading}) for key, answers in found.alternatives.items() for reading in answers]
        wanted = [expected[o.name] for o in item.outputs]
        # an output wrong only where any value is right is not one a model must change
        differing = {m.output for m in mismatches} - {o.name for o, want, got in zip(item.outputs, wanted, actual)
                                                       if settled(want, got) is not want and same_bits(settled(want, got), got).all()}
        diagnosis = diagnose(item, oracle.model, inputs, actual, reproduces, readings, differing, wanted)
        where = None if diagnosis else differences_lie(item, inputs, wanted, actual, same_bits)
        return Verdict(Outcome.FAIL, message, details, ambiguities, mismatches, diagnosis=diagnosis or [], where=where,
                       undiagnosed=UNDIAGNOSED if diagnosis is None else None)

    # Some questions leave only values open: the documents still fix shapes and element types.
    form = [m for m in mismatches if m.of_form]
    if open_ones and form and all(a.entry.get("shapes_settled") for a in open_ones):
        return failed(form[0].line())
    if open_ones:
        reading, message, candidates, per_question = _observed_reading(item, written, registry, found, actual, mismatches)
        if candidates is not None:  # no reading gives these outputs: is each element one that some reading gives?
            left = _unexplained(item, written, [expected, *candidates], actual)
            if left is not None:
                recorded = _undefined_values(item, written, registry, found, actual, left, rerun, details, mismatches)
                if recorded is not None:
                    return recorded
                return failed(_unexplained_line(item, left, expected, actual, found.ids))
            reading, message = "mixed readings", f"observed: mixed readings, each element as one of them ({message})"
            per_question = {key: [reading] for key in per_question}
        return Verdict(Outcome.DIVERGENT, message, details, ambiguities, mismatches, reading, per_question)
    if mismatches:
        return failed(mismatches[0].line())
    return Verdict(Outcome.PASS, "", ambiguities=ambiguities)


def with_retyping(verdict: Verdict, retyped: list[Retyped]) -> Verdict:
    """``verdict`` on the values as if typed right, with the wrong element types as a cause of their
    own: the item fails on them whatever its values earned. Where the values are right too (or as
    an open question allows), the types are the whole diagnosis; where they are wrong, the item
    carries both causes: ``retyped`` beside the values' diagnosis."""
    typed = [Mismatch(r.output, f"{r.output}: element type {r.got}, expected {r.wanted}", of_form=True) for r in retyped]
    names = [r.name for r in retyped]
    summary = "; ".join(m.summary for m in typed)
    details = "\n".join([*(m.text() for m in typed), *([verdict.details] if verdict.details else [])])
    if verdict.outcome is not Outcome.FAIL:  # the values as the documents (or a reading) give them
        return Verdict(Outcome.FAIL, summary, details, verdict.ambiguities, typed, diagnosis=[SEPARATOR.join(names)],
                       retyped=names)
    return dataclasses.replace(verdict, message=f"{summary}; as {', '.join(r.wanted for r in retyped)}: {verdict.message}",
                               details=details, mismatches=typed + verdict.mismatches, retyped=names)


def _judge_rejection(item: Item, backend: Backend, seed: int, question: Ambiguity | None) -> Verdict:
    """A refusal passes, where the backend runs the item's valid twin (else it refuses everything
    of this operator version, type or rank: unsupported); running fails. Where the documents
    leave the model's validity open (``question``), either is recorded as divergent."""
    tags = [question.id] if question else []
    try:
        outputs = run_on_copies(backend, item.model, item.make_inputs(seed))
    except IsolationFailed as e:  # the suite's failure is no refusal of the backend's
        raise SuiteError(str(e)) from None
    except (BackendLost, BackendGarbage) as e:  # losing the process is no way to refuse, nor is garbage
        return _beside_twin(_lost_or_garbage(e, tags), item, backend, seed)
    except Exception as e:  # noqa: BLE001 - a refusal in any form is what the item asks for, a declared one
        # too (OpenVINO's own 3D-5D check): a refusal where the twin runs, nothing where it is refused too
        refusal = f"refused: {_type_name(e)}: {first_line(str(e))}"
        twin = failed_twin(item, backend, seed)
        if twin is not None:  # it fails the valid model as well: the refusal proves nothing
            return _against_failed_twin(twin, f"{_type_name(e)}: {first_line(str(e))}", _exception_text(e), tags)
        if question:
            return Verdict(Outcome.DIVERGENT, f"observed: {refusal}", _exception_text(e), tags, reading="refused",
                           readings={question.id: ["refused"]})
        return Verdict(Outcome.PASS, refusal)
    problem = malformed(outputs)
    if problem:
        return Verdict(Outcome.ERROR, f"returned garbage: {problem}", problem, tags)
    shapes = ", ".join(str(getattr(o, "shape", type(o).__name__)) for o in outputs)
    if question:
        return Verdict(Outcome.DIVERGENT, f"observed: ran it (outputs of shape {shapes})", "", tags, reading="ran it",
                       readings={question.id: ["ran it"]})
    return Verdict(
        Outcome.FAIL,
        f"accepted an invalid model: {item.case.reject}",
        f"The model is invalid ({item.case.reject}), but the backend ran it and returned "
        f"outputs of shape {shapes}.",
    )


def _undefined_values(item: Item, written: dict[str, np.ndarray], registry: dict[str, Ambiguity], found: Questions,
                      actual: Sequence[Any], left: np.ndarray, again, details: str,
                      mismatches: list[Mismatch]) -> Verdict | None:
    """Where every position no reading explains is an empty window whose value the documents leave
    undefined: divergent, its class recorded; a fail where a second run answers otherwise. None
    where some such position has a window that holds elements (judged as ever)."""
    keys = undefined.questions_of(found, registry)
    empty = undefined.empty_windows(item, found, left.shape) if keys else None
    if empty is None or empty.shape != left.shape or (left & ~empty).any():
        return None
    changed = undefined.changed_between_runs(actual, again)
    if changed is not None:
        return Verdict(Outcome.FAIL, f"not deterministic: the values of windows without elements change from run to "
                       f"run ({changed})", details, found.ids, mismatches)
    reading = "undefined: " + ", ".join(undefined.classes(item, written, actual, left))
    return Verdict(Outcome.DIVERGENT, f"observed: {reading} at {int(left.sum())} windows without elements (the "
                   f"documents leave their value undefined)", details, found.ids, mismatches, reading,
                   {key: [reading] for key in keys})


def _against_failed_twin(twin: TwinFailed, summary: str, text: str, tags: list[str]) -> Verdict:
    """The item refused, and its valid twin failed too. Declared (the backend cannot run this
    operator version, type or rank at all): unsupported. Otherwise the twin's failure is a bug on a
    valid model, and the item's refusal proves nothing: an error, that carries the twin."""
    if twin.declared:
        return Verdict(Outcome.UNSUPPORTED, f"refuses its valid twin too ({twin.twin}: {twin.message}); the item: {summary}",
                       f"The backend refuses this item:\n{text}\n\nand declares that it cannot run its valid twin "
                       f"{twin.twin}, a minimal valid model of the same operator version, element type and rank:\n"
                       f"{twin.message}", tags, control=twin.twin)
    return Verdict(Outcome.ERROR, f"{summary}; its minimal valid model fails too ({twin.twin}: {twin.outcome.value}: "
                   f"{twin.message})", f"The backend refuses this item:\n{text}\n\nand fails its valid twin {twin.twin}, "
                   f"a minimal valid model of the same operator version, element type and rank, with no declared "
                   f"refusal ({twin.outcome.value}):\n{twin.message}", tags, twin=twin)


def _beside_twin(verdict: Verdict, item: Item, backend: Backend, seed: int) -> Verdict:
    """A crash, a timeout or garbage, judged on its own, with the valid twin's failure where the
    backend fails that too with no declared refusal (the line is then the minimal valid model's)."""
    twin = failed_twin(item, backend, seed)
    return dataclasses.replace(verdict, twin=twin) if twin is not None and not twin.declared else verdict


def _lost_or_garbage(e: Exception, tags: list[str]) -> Verdict:
    if isinstance(e, BackendLost):
        return Verdict(_LOST[type(e)], str(e), e.details, tags)
    return Verdict(Outcome.ERROR, f"returned garbage: {e}", str(e), tags)


def expected_outputs(item: Item, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Literal expectations as written; derived ones computed by the reference backend."""
    return derive(item, inputs)[0]


def compare(item: Item, written: dict[str, np.ndarray], expected: dict[str, np.ndarray],
            actual: Sequence[Any]) -> list[Mismatch]:
    """Every way ``actual`` (one array per output) differs from ``expected``, one paragraph each
    (``written``: the inputs as the case writes them, channels-first)."""
    found = []
    for output, got in zip(item.outputs, actual):
        want = expected[output.name]
        if got.dtype != want.dtype:
            found.append(Mismatch(output.name, f"{output.name}: element type {got.dtype}, expected {want.dtype}", of_form=True))
        elif got.shape != want.shape:
            found.append(Mismatch(output.name, f"{output.name}: shape {list(got.shape)}, expected {list(want.shape)}",
                                  of_form=True))
        elif output.positions_of and item.case.domain == OPENVINO_DOMAIN:
            found += _check_reduced_positions(item, output, written, expected[output.positions_of], want, got)
        elif output.positions_of:
            found += _check_positions(item, output, written, want, got)
        else:
            found += _check_values(output.name, want, got)
    return found


def _check_values(name: str, want: np.ndarray, got: np.ndarray) -> list[Mismatch]:
    bad = ~same_bits(want, got)
    if not bad.any():
        return []
    shown = [f"{name}[{_at(at)}]: expected {_show(want[at])}, got {_show(got[at])}" for at in _first(bad)]
    return [_mismatch(name, f"{name}: {int(bad.sum())} of {want.size} elements differ", shown, bad)]


def _first(bad: np.ndarray) -> list[tuple[int, ...]]:
    return [tuple(int(p) for p in pos) for pos in np.argwhere(bad)[:SHOWN_MISMATCHES]]


def _at(position: tuple[int, ...]) -> str:
    return ", ".join(map(str, position))


def _mismatch(name: str, summary: str, shown: list[str], bad: np.ndarray) -> Mismatch:
    if bad.sum() > SHOWN_MISMATCHES:
        shown.append(f"... and {int(bad.sum()) - SHOWN_MISMATCHES} more")
    if bad.ndim < 2:
        return Mismatch(name, summary, shown)
    leading = tuple(int(i) for i in np.argwhere(bad)[0][:-2])
    grid = bad[leading][:32, :32]
    return Mismatch(name, summary, shown, list(leading), ["".join("x" if v else "." for v in row) for row in grid])


def _check_positions(item: Item, output: ItemOutput, written: dict[str, np.ndarray],
                     want: np.ndarray, got: np.ndarray) -> list[Mismatch]:
    """Each index must name an element of its own window equal to the one the expected index
    names, its maximum (before any activation). X is as the case writes it, channels-first, and
    the indices as ai.onnx gives them, whatever the operator's layout (``nhwc-indices``)."""
    ok, inside, row_major, values = _positions_ok(item, written, want, got)
    if ok.all():
        return []
    x = written[item.inputs[0].name]
    shown = []
    for at in _first(~ok):
        index, wanted = int(got[at]), int(want[at])
        if not inside[at]:
            why = f"outside [0, {x.size})" if index >= 0 or wanted >= 0 else "not the expected marker"
        else:
            element: tuple[Any, ...] = np.unravel_index(int(row_major[at]), x.shape)
            shown_at = stored_shape(element, item.layout)  # where the backend's X holds it
            why = f"X[{_at(shown_at)}] = {_show(x[element])}; the window's maximum is {_show(values[at])}"
        shown.append(f"{output.name}[{_at(at)}] = {index} (expected e.g. {wanted}): {why}")
    summary = f"{output.name}: {int((~ok).sum())} of {got.size} indices do not point at their window's maximum"
    return [_mismatch(output.name, summary, shown, ~ok)]


def _positions_ok(item: Item, written: dict[str, np.ndarray], want: np.ndarray,
                  got: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(which indices are right, which name an element of X, their row-major positions, the
    maximum each should point at)."""
    x = written[item.inputs[0].name]
    attrs = item.case.attributes
    axes = node_axes(item.case.domain, attrs, x.shape[2:])
    order = attrs.get("storage_order", 0)
    wanted_at = from_storage_order(want, x.shape, order)
    values = x.reshape(-1)[np.where(want >= 0, wanted_at, 0)] if x.size else np.zeros(want.shape, x.dtype)
    row_major = from_storage_order(got, x.shape, order)
    inside = (row_major >= 0) & (row_major < x.size)
    safe = np.where(inside, row_major, 0)
    plane_size = int(np.prod(x.shape[2:], dtype=np.int64))
    plane, within = np.divmod(safe, max(plane_size, 1))
    position = np.indices(got.shape)
    ok = inside & (plane == position[0] * x.shape[1] + position[1])
    coords = np.unravel_index(within, x.shape[2:]) if plane_size else ()
    for axis, a in enumerate(axes if plane_size else ()):  # an empty spatial axis: no element to be in
        offset = coords[axis] - (position[2 + axis] * a.stride - a.pad_begin)
        ok &= (offset >= 0) & (offset % a.dilation == 0) & (offset // a.dilation < a.kernel)
    if x.size:
        ok &= same_bits(x.reshape(-1)[safe], values)
    # A window over padding alone has no element to point at: only the expected marker will do.
    return np.where(want < 0, got == want, ok), inside, row_major, values


def _check_reduced_positions(item: Item, output: ItemOutput, written: dict[str, np.ndarray],
                             maxima: np.ndarray, want: np.ndarray, got: np.ndarray) -> list[Mismatch]:
    """OpenVINO's Indices count from `axis` on, so they name an element only up to the axes
    before it: an index passes when some element of its window sits at that reduced index and
    holds the expected maximum."""
    ok = _reduced_positions_ok(item, written, maxima, want, got)
    if ok.all():
        return []
    shown = [f"{output.name}[{_at(at)}] = {int(got[at])} (expected e.g. {int(want[at])}): no element of the window "
             f"at that index holds the maximum {_show(maxima[at])}" for at in _first(~ok)]
    summary = f"{output.name}: {int((~ok).sum())} of {got.size} indices do not point at their window's maximum"
    return [_mismatch(output.name, summary, shown, ~ok)]


def _reduced_positions_ok(item: Item, written: dict[str, np.ndarray], maxima: np.ndarray,
                          want: np.ndarray, got: np.ndarray) -> np.ndarray:
    x = written[item.inputs[0].name]
    a = item.case.attributes
    axes = node_axes(item.case.domain, a, x.shape[2:])
    bound = max(openvino_bound(x.shape, a.get("axis", 0)), 1)
    flat_x = x.reshape(-1)
    position = np.indices(got.shape)
    plane = (position[0] * x.shape[1] + position[1]) * int(np.prod(x.shape[2:], dtype=np.int64))
    ok = np.zeros(got.shape, bool)
    for tap in itertools.product(*(range(axis.kernel) for axis in axes)):
        inside = np.ones(got.shape, bool)
        element = plane
        for i, (axis, j) in enumerate(zip(axes, tap)):
            at = position[2 + i] * axis.stride - axis.pad_begin + j * axis.dilation
            inside &= (at >= 0) & (at < axis.size)
            element = element + np.clip(at, 0, axis.size - 1) * int(np.prod(x.shape[3 + i:], dtype=np.int64))
        if x.size:
            ok |= inside & (element % bound == got) & same_bits(flat_x[element], maxima)
    return np.where(want < 0, got == want, ok)  # no element to point at (openvino-window-without-element)


def _observed_reading(item: Item, written: dict[str, np.ndarray], registry: dict[str, Ambiguity], found: Questions,
                      actual: Sequence[Any], mismatches: list[Mismatch]
                      ) -> tuple[str, str, list[dict[str, np.ndarray]] | None, dict[str, list[str]]]:
    """(reading, message, answers, per question): which reading the outputs show, the expected one,
    another one's answer (computed by the reference under that reading), several at once, or none
    of them; where none, the other readings' answers (outputs by name) it was compared with (None
    where one matched); and per open question, the readings the outputs are consistent with."""
    case = item.case
    open_ones = [registry[key] for key in found.ids if registry[key].status == "open"]
    # an open question always names its reference reading (str, where the type allows None)
    expected: list[Any] = [case.expected_reading if case.ambiguity and a.id == case.ambiguity.id else a.reference
                           for a in open_ones]
    per_question = {a.id: [reading] for a, reading in zip(open_ones, expected)}
    if not mismatches:
        return ", ".join(expected), f"observed: {', '.join(expected)} (the case's outputs)", None, per_question
    names = [o.name for o in item.outputs]
    answers = []
    for question in open_ones:  # two readings can give this item the same outputs: name both
        shown = [reading for reading, other in found.alternatives.get(question.id, {}).items()
                 if other.outputs is not None and _matches(item, written, other.outputs, actual)]
        if shown:
            return " or ".join(shown), f"observed: {' or '.join(shown)}", None, {**per_question, question.id: shown}
        answers += [dict(zip(names, other.outputs)) for other in found.alternatives.get(question.id, {}).values()
                    if other.outputs is not None]
    for readings in combined_readings(item, found, registry):
        other = answer(item, item.to_model(written), readings)
        if other.outputs is not None and _matches(item, written, other.outputs, actual):
            reading = " + ".join(readings.differing().values())
            return reading, f"observed: {reading}", None, \
                {**per_question, **{key: [chosen] for key, chosen in readings.differing().items()}}
        if other.outputs is not None:
            answers.append(dict(zip(names, other.outputs)))
    unmatched = f"not {', '.join(expected)}"
    return unmatched, f"observed: {unmatched} ({mismatches[0].summary})", answers, {key: [unmatched] for key in per_question}


def _unexplained(item: Item, written: dict[str, np.ndarray], answers: list[dict[str, np.ndarray]],
                 actual: Sequence[Any]) -> np.ndarray | None:
    """The output positions that no reading's answer explains (None: none): a value none of them
    has there, an index that points at the window's maximum under none of them. Y and Indices
    are explained together, by one reading at a time: a NaN Y beside an index at a number is no
    reading's. An open question leaves some elements open, never licence for any output."""
    shape = actual[0].shape
    shaped = [a for a in answers if all(a[o.name].dtype == got.dtype and a[o.name].shape == got.shape
                                        for o, got in zip(item.outputs, actual))]
    if not shaped:  # no reading has these shapes: every position, if any (a batch of 0 has none)
        return np.ones(shape, bool)
    if any(got.shape != shape for got in actual):  # NHWC's Y beside channels-first Indices: not position by position
        return np.ones(shape, bool)
    wrong = np.ones(shape, bool)
    for answer_ in shaped:
        ok = np.ones(shape, bool)
        for output, got in zip(item.outputs, actual):
            want = answer_[output.name]
            fits = same_bits(want, got)
            if output.positions_of:
                try:
                    if item.case.domain == OPENVINO_DOMAIN:
                        fits |= _reduced_positions_ok(item, written, answer_[output.positions_of], want, got)
                    else:
                        fits |= _positions_ok(item, written, want, got)[0]
                except (ValueError, IndexError):  # the windows of another reading: only an equal index counts
                    pass
            ok &= fits
        wrong &= ~ok
    return wrong if wrong.any() else None


def _unexplained_line(item: Item, wrong: np.ndarray, expected: dict[str, np.ndarray],
                      actual: Sequence[Any], questions_: list[str]) -> str:
    shapes = ", ".join(f"{o.name} {list(got.shape)} (the default reading: {list(expected[o.name].shape)})"
                       for o, got in zip(item.outputs, actual))
    if not wrong.any():  # an output without positions, of a shape no reading gives
        return f"output shapes no reading of {', '.join(questions_)} gives: {shapes}"
    if any(got.shape != wrong.shape for got in actual):  # the outputs' positions do not line up
        return f"{' and '.join(o.name for o in item.outputs)}: no reading of {', '.join(questions_)} gives them ({shapes})"
    at = _first(wrong)[0]
    shown = []
    for output, got in zip(item.outputs, actual):
        want = expected[output.name]
        default = f" (the default reading: {_show(want[at])})" if want.shape == got.shape else ""
        shown.append(f"{output.name}[{_at(at)}] = {_show(got[at])}{default}")
    names = " and ".join(o.name for o in item.outputs)
    return (f"{names}: {int(wrong.sum())} of {wrong.size} positions match no reading of {', '.join(questions_)}; "
            + "; ".join(shown))


def _matches(item: Item, written: dict[str, np.ndarray], outputs: Sequence[np.ndarray], actual: Sequence[Any]) -> bool:
    """Whether ``actual`` is what another reading answers: bit for bit, or, for Indices, any
    index of an equal maximum of the same window."""
    if len(actual) != len(outputs):
        return False
    equal = [isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
             and bool(same_bits(want, got).all()) for want, got in zip(outputs, actual)]
    if all(equal):
        return True
    if any(not same and not port.positions_of for same, port in zip(equal, item.outputs)):
        return False  # values compare bit for bit: only Indices can match otherwise
    try:
        return not compare(item, written, dict(zip((o.name for o in item.outputs), outputs)), actual)
    except (ValueError, IndexError):  # the windows of another reading: only an exact match counts
        return False


def _show(value: Any) -> str:
    value = np.asarray(value)
    if np.issubdtype(value.dtype, np.integer):
        return str(int(value))
    as_float = float(value.astype(np.float64))
    bits = int(value.reshape(1).view(f"u{value.dtype.itemsize}")[0])
    return f"{as_float!r} (0x{bits:0{2 * value.dtype.itemsize}x})"


def _type_name(e: BaseException) -> str:
    return e.type_name if isinstance(e, RaisedInBackend) else type(e).__name__


def _exception_text(e: BaseException) -> str:
    if isinstance(e, RaisedInBackend):
        return e.text.strip()
    output = process_output(e)
    return "".join(traceback.format_exception_only(type(e), e)).strip() + (f"\n{output}" if output else "")


_LOST = {BackendCrashed: Outcome.CRASH, BackendTimedOut: Outcome.TIMEOUT}

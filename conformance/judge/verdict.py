"""Stage 4 of the pipeline: run one item on a backend and judge what came back: a refusal
against its control, an answer against the oracle (compared as ``compare.py`` compares outputs),
under the readings of the item's open questions, a failure diagnosed (``diagnosis.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..backends import (Backend, BackendCrashed, BackendGarbage, BackendLost, BackendTimedOut, IsolationFailed,
                        RaisedInBackend, Unsupported, malformed, process_output)
from ..expand.items import Item
from ..load.cases import Ambiguity, inert
from ..outcomes import Outcome
from ..semantics import OPENVINO_DOMAIN, Readings
from . import undefined
from .ambiguities import Questions, answer, combined_readings
from .control import TwinFailed, failed_twin, first_line, run_on_copies
from .analysis.diagnosis import diagnose
from .compare import (Mismatch, compare, first_positions, matches, position_text, positions_ok,
                      reduced_positions_ok, same_bits, shown_value)
from .analysis.retyping import Retyped, factored
from .analysis.where import differences_lie
from .diagnoses import Diagnosis, Model
from .oracle import SuiteError, consult, derive

UNDIAGNOSED = "the diagnosis budget of the run was spent (--conformance-diagnosis-budget)"


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
    # fail: the defect models that reproduce the backend's outputs exactly (judge/analysis/diagnosis.py)
    diagnosis: list[Diagnosis] = field(default_factory=list)
    # fail, undiagnosed: the class of input window every wrong element's shares (judge/analysis/where.py)
    where: str | None = None
    undiagnosed: str | None = None  # fail: why no diagnosis was tried (the run's diagnosis budget spent)
    # fail: the outputs answered in another element type whose values survive the cast back, each
    # a cause of its own beside the values' (judge/analysis/retyping.py)
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
    # are judged as if the type were right, and the verdict then carries both (judge/analysis/retyping.py)
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

    # Some questions leave only values open: the documents still fix shapes and element types.
    form = [m for m in mismatches if m.of_form]
    if open_ones and form and all(a.entry.get("shapes_settled") for a in open_ones):
        return _failed(item, oracle, inputs, actual, registry, mismatches, form[0].line())
    if open_ones:
        reading, message, candidates, per_question = _observed_reading(item, written, registry, found, actual, mismatches)
        if candidates is not None:  # no reading gives these outputs: is each element one that some reading gives?
            left = _unexplained(item, written, [expected, *candidates], actual)
            if left is not None:
                recorded = _undefined_values(item, written, registry, found, actual, left, rerun, details, mismatches)
                if recorded is not None:
                    return recorded
                return _failed(item, oracle, inputs, actual, registry, mismatches, _unexplained_line(item, left, expected, actual, found.ids))
            reading, message = "mixed readings", f"observed: mixed readings, each element as one of them ({message})"
            per_question = {key: [reading] for key in per_question}
        return Verdict(Outcome.DIVERGENT, message, details, ambiguities, mismatches, reading, per_question)
    if mismatches:
        return _failed(item, oracle, inputs, actual, registry, mismatches, mismatches[0].line())
    return Verdict(Outcome.PASS, "", ambiguities=ambiguities)


def _failed(item: Item, oracle: Any, inputs: dict[str, np.ndarray], actual: Sequence[Any],
            registry: dict[str, Ambiguity], mismatches: list[Mismatch], message: str) -> Verdict:
    """A fail, diagnosed by the defect models that reproduce these outputs exactly, except where
    the documents leave the value undefined (a window without elements): a model is not named for
    an answer any value would be."""
    found, wanted = oracle.found, [oracle.expected[o.name] for o in item.outputs]
    undefined_at = None
    if undefined.questions_of(found, registry) and actual and isinstance(actual[0], np.ndarray):
        undefined_at = undefined.empty_windows(item, found, actual[0].shape)
    readings = [Readings({key: reading}) for key, answers in found.alternatives.items() for reading in answers]
    # an output wrong only where any value is right is not one a model must change
    differing = {m.output for m in mismatches} - {
        o.name for o, want, got in zip(item.outputs, wanted, actual)
        if (settled := _settled(want, got, undefined_at)) is not want and same_bits(settled, got).all()}
    reproduces = functools.partial(_reproduces, item, oracle.written, undefined_at)
    diagnosis = diagnose(item, oracle.model, inputs, actual, reproduces, readings, differing, wanted)
    where = None if diagnosis else differences_lie(item, inputs, wanted, actual)
    return Verdict(Outcome.FAIL, message, "\n".join(m.text() for m in mismatches), list(found.ids), mismatches,
                   diagnosis=diagnosis or [], where=where, undiagnosed=UNDIAGNOSED if diagnosis is None else None)


def _settled(want: np.ndarray, got: Any, undefined_at: np.ndarray | None) -> np.ndarray:
    """``want`` with the backend's values where the documents leave them undefined."""
    if (undefined_at is None or not undefined_at.any() or not isinstance(got, np.ndarray)
            or not want.shape == got.shape == undefined_at.shape or want.dtype != got.dtype):
        return want
    return np.where(undefined_at, got, want)


def _reproduces(item: Item, written: dict[str, np.ndarray], undefined_at: np.ndarray | None,
                outputs: Sequence[np.ndarray], got: Sequence[Any]) -> bool:
    """Whether a defect model's ``outputs`` are the backend's, as the judge compares them."""
    return matches(item, written, [_settled(want, have, undefined_at) for want, have in zip(outputs, got)], got)


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
        return Verdict(Outcome.FAIL, summary, details, verdict.ambiguities, typed, diagnosis=[Diagnosis(tuple(map(Model, names)))],
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
                 if other.outputs is not None and matches(item, written, other.outputs, actual)]
        if shown:
            return " or ".join(shown), f"observed: {' or '.join(shown)}", None, {**per_question, question.id: shown}
        answers += [dict(zip(names, other.outputs)) for other in found.alternatives.get(question.id, {}).values()
                    if other.outputs is not None]
    for readings in combined_readings(item, found, registry):
        other = answer(item, item.to_model(written), readings)
        if other.outputs is not None and matches(item, written, other.outputs, actual):
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
                        fits |= reduced_positions_ok(item, written, answer_[output.positions_of], want, got)
                    else:
                        fits |= positions_ok(item, written, want, got)[0]
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
    at = first_positions(wrong)[0]
    shown = []
    for output, got in zip(item.outputs, actual):
        want = expected[output.name]
        default = f" (the default reading: {shown_value(want[at])})" if want.shape == got.shape else ""
        shown.append(f"{output.name}[{position_text(at)}] = {shown_value(got[at])}{default}")
    names = " and ".join(o.name for o in item.outputs)
    return (f"{names}: {int(wrong.sum())} of {wrong.size} positions match no reading of {', '.join(questions_)}; "
            + "; ".join(shown))


def _type_name(e: BaseException) -> str:
    return e.type_name if isinstance(e, RaisedInBackend) else type(e).__name__


def _exception_text(e: BaseException) -> str:
    if isinstance(e, RaisedInBackend):
        return e.text.strip()
    output = process_output(e)
    return "".join(traceback.format_exception_only(type(e), e)).strip() + (f"\n{output}" if output else "")


_LOST = {BackendCrashed: Outcome.CRASH, BackendTimedOut: Outcome.TIMEOUT}

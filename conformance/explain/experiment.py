"""One line's experiment: from its smallest item, probe models run on the backend as the suite
judges items, in three named passes (as Hypothesis's explain phase runs after its shrinker):

- ``reproduce``: the item as a probe, with its own values, must fail as the line does; the same
  model with values of a recipe like the item's (``factors.filling_like``) takes its place where
  it fails the same way too, so that later passes may change the shape (else the values decide,
  and probes that change the shape or type say nothing);
- ``shrink``: the shrink passes of ``factors`` applied greedily, each step kept where the model
  still fails the same way, until none applies: a minimal failing model;
- ``vary``: every factor of the minimal model varied once (``factors.changes``): a factor whose
  change makes it pass decides (a condition of the failure), one whose change leaves the failure
  as it is is free, one that changes how it fails is recorded as such.

"The same way" is the failure's class: the outcome, and for a wrong answer the first output that
differs and how (its element type, its shape, its values, its indices), for a refusal, crash or
timeout the runtime's words made generic (``report.causes.generic_words``). Every probe counts
against the experiment's limits; past them, what was measured stands, marked incomplete.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..backends import Backend
from ..fuzz.cases import NotDrawable, build_item
from ..judge.diagnoses import BUDGET
from ..judge.verdict import SuiteError, Verdict, evaluate
from ..load.cases import Ambiguity, CaseError
from ..outcomes import Outcome
from ..report.causes import DIFFERENCES, diagnostic, generic_words
from ..semantics import GeometryError
from .factors import SHRINK_PASSES, Config, as_json, changes, described, key_of

FAILURES = (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT)
MISSING = (Outcome.UNSUPPORTED, Outcome.DIVERGENT)  # a probe the runtime declares it cannot run, or an open question: says nothing


def failure_of(verdict: Verdict | None) -> str | None:
    """A probe's failure class (None: it passes, or says nothing either way)."""
    if verdict is None or verdict.outcome not in FAILURES:
        return None
    if verdict.outcome is Outcome.FAIL:
        differing = [m for m in verdict.mismatches if not (verdict.retyped and m.of_form and "element type" in m.summary)]
        if not differing:
            return f"fail: answered as {', '.join(verdict.retyped)}"  # the type alone is wrong
        first = differing[0]
        kind = next((label for words, label in DIFFERENCES if words in first.summary), "differs")
        return f"fail: {first.output} {kind}"
    return f"{verdict.outcome.value}: " + generic_words(diagnostic({"message": verdict.message}))


class OutOfProbes(Exception):
    """The experiment's limits are reached: what was measured stands."""


@dataclass
class Explanation:
    """What an experiment measured on one line: its minimal failing model, the factors that decide
    the failure (each with the model's value and the values that make it pass), those that leave it
    as it is, and those that change how it fails."""

    probed: str  # the item the experiment started from
    failure: str  # the minimal model's failure class
    minimal: Config
    deciding: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # factor -> (the model's value, passing values)
    kinds: dict[str, str] = field(default_factory=dict)  # a deciding factor -> its value's class (factors.Change.kind)
    failing_too: dict[str, list[str]] = field(default_factory=dict)  # factor -> other values that fail the same way
    free: list[str] = field(default_factory=list)
    changing: dict[str, list[str]] = field(default_factory=dict)  # factor -> "value: other failure"
    measured: set[str] = field(default_factory=set)  # the factors some legal probe varied
    values_decide: bool = False  # the item's own values fail and a recipe's do not
    probes: int = 0
    seconds: float = 0.0
    complete: bool = True

    @property
    def conditions(self) -> str:
        """"fails whenever the input is 1-D and the pads on axis 0 are (0, 1); passes with 2-D, (1, 1) or (0, 0)"."""
        if not self.deciding:
            whenever = "on every variation tried" if self.free else "on the minimal model"
            return f"fails {whenever}" + ("; its values decide" if self.values_decide else "")
        now = " and ".join(value + (f" (or {' or '.join(self.failing_too[f])})" if f in self.failing_too else "")
                           for f, (value, _) in self.deciding.items())
        passes = "; ".join(f"{factor}: {' or '.join(values)}" for factor, (_, values) in self.deciding.items())
        return f"fails whenever {now}; passes with {passes}" + ("; its values decide" if self.values_decide else "")

    @property
    def kind(self) -> str:
        """The failure as causes are told apart: a wrong answer of the operator (its shape, values
        or indices: one misread geometry changes the shape of one item and the values of another),
        or its refusal, crash or timeout in the runtime's words."""
        target = self.minimal["target"]
        wrong = self.failure.startswith("fail: ") and not self.failure.startswith("fail: answered as")
        return f"{target.domain} {target.op}: " + ("fail: a wrong answer" if wrong else self.failure)

    def agrees_with(self, other: Explanation) -> bool:
        """Whether two lines' experiments measured one cause: the same kind of failure, a deciding
        factor in common, each common one of the same class (``factors.Change.kind``), and every factor deciding in one left
        unmeasured by the other (no legal probe of its model could vary it)."""
        if self.kind != other.kind or not set(self.deciding) & set(other.deciding):
            return False
        if any(self.kinds[f] != other.kinds[f] for f in set(self.deciding) & set(other.deciding)):
            return False
        return not (set(self.deciding) - set(other.deciding)) & other.measured and not (
            set(other.deciding) - set(self.deciding)) & self.measured

    def text(self) -> str:
        """The conditions, where they were measured (from the line's smallest item: the line's other
        items are not probed) and the minimal model (the same words on every run that measures the
        same: the probes' count is in results.json, not in a line's name)."""
        return (f"{self.conditions} (by experiment on its smallest item{'' if self.complete else ', cut short by its budget'}; "
                f"minimal model {described(self.minimal)})")

    def as_json(self) -> dict[str, Any]:
        return {"probed": self.probed, "failure": self.failure, "kind": self.kind, "text": self.text(),
                "minimal": as_json(self.minimal),
                "deciding": [{"factor": f, "fails": now, "passes": values} for f, (now, values) in self.deciding.items()],
                "free": self.free, "changing": [{"factor": f, "to": to} for f, to in self.changing.items()],
                "values_decide": self.values_decide, "probes": self.probes, "seconds": round(self.seconds, 3),
                "complete": self.complete}


class Experiment:
    """Probes of one line, run on ``backend`` (the run's runner: the backend in its isolation)."""

    def __init__(self, backend: Backend, registry: dict[str, Ambiguity], seed: int, max_probes: int, deadline: float):
        self.backend, self.registry, self.seed = backend, registry, seed
        self.max_probes, self.deadline = max_probes, deadline
        self.judged: dict[str, str | None | bool] = {}  # a probe's key -> its failure class (False: no legal model)
        self.probes = 0
        # A probe that meets an open question of the documents says nothing (its answer may be any
        # reading's), unless the item itself meets one: a shrink must not wander into windows of
        # padding alone, where the documents are silent.
        self.open_questions = False

    def failure(self, config: Config) -> str | None | bool:
        """The probe's failure class, run once (None: passes or says nothing; False: no legal model)."""
        key = key_of(config)
        if key not in self.judged:
            if self.probes >= self.max_probes or time.monotonic() >= self.deadline:
                raise OutOfProbes
            self.probes += 1
            self.judged[key] = self._judge(config)
        return self.judged[key]

    def _judge(self, config: Config) -> str | None | bool:
        try:
            item = build_item(config, self.registry, "probe")
            item.model  # onnx.checker refuses a geometry the documents allow: no probe
        except (NotDrawable, CaseError, GeometryError, ValueError):
            return False
        left, BUDGET.left = BUDGET.left, 0.0  # a probe is judged, never diagnosed: its class is all it gives
        try:
            verdict = evaluate(item, self.backend, self.seed, self.registry)
        except SuiteError:
            return False
        finally:
            BUDGET.left = left
        if verdict.outcome in MISSING or not self.open_questions and any(
                self.registry[key].status == "open" for key in verdict.ambiguities if key in self.registry):
            return False
        return failure_of(verdict)

    def explain(self, item_id: str, config: Config) -> Explanation | None:
        """The line's explanation from its smallest item's configuration; None where no probe of it
        fails as it did (a flaky failure, or one the probe model cannot rebuild)."""
        started = time.monotonic()
        explanation = None
        try:
            explanation = self.reproduce(item_id, config)
            if explanation is not None:
                self.shrink(explanation)
                self.vary(explanation)
        except OutOfProbes:
            if explanation is not None:
                explanation.complete = False
        if explanation is not None:
            explanation.probes, explanation.seconds = self.probes, time.monotonic() - started
        return explanation

    # ---- the passes ----

    def reproduce(self, item_id: str, config: Config) -> Explanation | None:
        wanted = self.failure(config)
        if wanted is False:  # the item meets an open question: so may its probes
            self.open_questions = True
            self.judged.clear()
            wanted = self.failure(config)
        if not isinstance(wanted, str):
            return None
        recipe = {k: v for k, v in config.items() if k != "data"}
        if self.failure(recipe) == wanted:
            return Explanation(item_id, wanted, recipe)
        return Explanation(item_id, wanted, config, values_decide=True)

    def shrink(self, explanation: Explanation) -> None:
        """Each shrink pass's first step that keeps the failure taken, the passes run again from the
        first after every step taken, until no step is."""
        progress = True
        while progress:
            progress = False
            for shrink_pass in SHRINK_PASSES:
                for smaller in shrink_pass(explanation.minimal):
                    if explanation.values_decide and "data" not in smaller:
                        continue  # the item's values decide: a recipe's say nothing
                    if self.failure(smaller) == explanation.failure:
                        explanation.minimal = smaller
                        progress = True
                        break
                if progress:
                    break

    def vary(self, explanation: Explanation) -> None:
        for change in changes(explanation.minimal):
            if explanation.values_decide and "data" not in change.config:
                continue
            found = self.failure(change.config)
            if found is False:
                continue  # no legal model: the factor cannot vary here
            explanation.measured.add(change.factor)
            if found is None:
                now, passing = explanation.deciding.setdefault(change.factor, (change.now, []))
                passing.append(change.then)
                explanation.kinds[change.factor] = change.kind
            elif found == explanation.failure:
                explanation.failing_too.setdefault(change.factor, []).append(change.then)
                if change.factor not in explanation.free:
                    explanation.free.append(change.factor)
            else:
                explanation.changing.setdefault(change.factor, []).append(f"{change.then}: {found}")
        # a factor that passes one way and fails the same way another (a rank up and a rank down)
        # still decides: its model's value is a condition
        explanation.free = [f for f in explanation.free if f not in explanation.deciding]
        explanation.failing_too = {f: v for f, v in explanation.failing_too.items() if f in explanation.deciding}


"""The differential search: draw configurations, judge each as the suite does, shrink one example
of each failure signature to a minimal model with hypothesis, and tell which selectors it
depends on.

The search judges ``budget`` configurations of a hypothesis sequence seeded by the run's seed,
recording each signature (operator, outcome, what differs, element type, Indices or not) with its
first example. Each signature is then shrunk on its own: hypothesis replays the same sequence
(judgements are cached) up to that example and shrinks it, keeping the signature; the operator
version shrinks too, and the selector analysis then varies the version, the element type and
every attribute of the minimal model. A run is deterministic for a seed, up to the shrinking
time cap (a shrink cut short stops where the cap finds it).
"""

from __future__ import annotations

import contextlib
import gc
import math
import re
import signal
import threading
import time
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky, Unsatisfiable
from hypothesis.internal.conjecture import providers as hypothesis_providers

from ..backends import Backend
from ..load.cases import Ambiguity, CaseError
from ..load.dtypes import DTYPES
from ..judge.oracle import LastComputed, ScriptValues
from ..judge.catalogue import ORDER, entries
from ..judge.diagnoses import Diagnosis
from ..judge.verdict import SuiteError, Verdict, evaluate
from ..report.causes import diagnostic, generic_words, title
from ..outcomes import BACKEND_FAILURES, Outcome
from ..expand.items import Item
from .cases import NotDrawable, build_item
from .space import Target, configurations, on_axes, strata, with_changes

DEFAULT_BUDGET = 1000
DEFAULT_SHRINK_S = 20.0  # per cluster
CHUNK = 10  # configurations per hypothesis run of the search (one stratum each)


@dataclass(frozen=True)
class Signature:
    """What a failure is, as far as shrinking must keep it."""

    op: str  # the operator as in item ids, without its version (which shrinks to the first that fails)
    outcome: str
    kind: str  # what differs: an output's values or form, a refusal, an accepted invalid model, a crash
    dtype: str
    indices: bool
    title: str = field(default="", compare=False)  # a diagnosed failure's: its models' titles

    def describe(self) -> str:
        if self.kind.startswith(DIAGNOSED):
            name = self.kind.removeprefix(DIAGNOSED)
            return f"{self.op}: {self.outcome}, reproduced exactly by a defect model: {self.title} ({name})"
        return f"{self.op} [{self.dtype}{', with Indices' if self.indices else ''}]: {self.outcome}, {self.kind}"

    def slug(self) -> str:
        words = re.sub(r"[^a-z0-9]+", "_", f"{self.kind} {self.dtype}".lower()).strip("_")
        return words[:40].rstrip("_")


@dataclass
class Cluster:
    signature: Signature
    config: dict[str, Any]  # the minimal configuration
    item: Item
    verdict: Verdict
    hits: int = 1  # configurations of the search with this signature
    found_after: int = 0  # configurations judged when it was first seen
    found_after_s: float = 0.0
    selectors: list[dict[str, str]] = field(default_factory=list)  # each varied selector and what it did
    chunk: int = 0  # the chunk of the search that drew its first example
    values: ScriptValues | None = None  # the inputs and expected outputs of its item, as judged (its script's)

    @property
    def matters(self) -> list[str]:
        return [s["selector"] for s in self.selectors if s["effect"] == "passes"]


@dataclass
class FuzzRun:
    backend: str
    backend_version: str
    seed: int
    budget: int
    judged: int = 0  # configurations judged by the search
    discarded: int = 0  # recipes that make no legal model, or that the reference refuses
    outcomes: dict[str, int] = field(default_factory=dict)
    clusters: list[Cluster] = field(default_factory=list)
    seconds: float = 0.0
    search_seconds: float = 0.0
    unsupported: list[str] = field(default_factory=list)  # op-version[dtype] the backend cannot run
    stopped: str = "budget"  # or "max-time" (the deadline came first) or "interrupted" (Ctrl-C)

    @property
    def per_second(self) -> float:
        return self.judged / self.search_seconds if self.search_seconds else 0.0


class _Stop(BaseException):
    """Ends a search early (not an Exception, so that hypothesis does not take it for a bug)."""


@contextlib.contextmanager
def _ctrl_c_remembered(fuzzer: "Fuzzer") -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt as always, and is remembered: Python drops an exception
    raised while a gc callback runs (hypothesis installs one), so the search checks the flag too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def pressed(signum, frame):
        fuzzer.ctrl_c = True
        if not _in_a_gc_callback(frame):  # there Python would print the exception and go on
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, pressed)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


def _in_a_gc_callback(frame) -> bool:
    """Whether ``frame`` runs inside one of ``gc.callbacks`` (hypothesis installs one): an exception
    raised there is not raised at all, only printed as "Exception ignored in ... gc_callback"."""
    codes = {getattr(callback, "__code__", None) for callback in gc.callbacks}
    while frame is not None:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


class FuzzInterrupted(KeyboardInterrupt):
    """Ctrl-C during a fuzz: carries the run as far as it got (its clusters, shrunk or not)."""

    def __init__(self, run: FuzzRun):
        super().__init__()
        self.run = run


class _Found(Exception):
    """The example a shrink is after (hypothesis shrinks what raises it)."""


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis (6.131 on) mixes into its draws the literals of every local module loaded so far,
    so the same seed drew different configurations depending on what the process had imported (the
    pytest plugin, a checkout against an installed wheel, any new literal in the code). The run's
    sequence must depend on its seed only: draw with no local constants."""
    get = getattr(hypothesis_providers, "_get_local_constants", None)
    if get is None:  # a hypothesis without the feature draws from the seed alone
        yield
        return
    empty = hypothesis_providers.Constants()
    hypothesis_providers._get_local_constants = lambda: empty
    hypothesis_providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        hypothesis_providers._get_local_constants = get
        hypothesis_providers.CONSTANTS_CACHE.cache.clear()


def signature_of(config: dict[str, Any], item: Item, verdict: Verdict) -> Signature | None:
    if verdict.outcome not in BACKEND_FAILURES:
        return None
    indices = len(item.outputs) > 1
    if config.get("reject"):
        kind = f"accepts a model that {config['reject'].split(':')[0]}"
    elif verdict.outcome is Outcome.ERROR:
        kind = "refuses a valid model: " + generic_words(diagnostic({"message": verdict.message}))
    elif verdict.outcome is not Outcome.FAIL:
        kind = verdict.outcome.value
    elif verdict.diagnosis:  # one defect model explains it: one cluster, whatever the type or outputs
        chosen = min(verdict.diagnosis, key=_model_order)
        return Signature(item.id.split("/")[0].rpartition("-")[0], verdict.outcome.value, f"{DIAGNOSED}{chosen.name}", "",
                         False, title(chosen, entries(chosen.models)))
    else:
        first = verdict.mismatches[0]
        kind = f"{first.output} {'form' if first.of_form else 'values'}"
        if first.of_form:
            kind += ": " + ("element type" if "element type" in first.summary else "shape")
        elif first.shown and "expected" in first.shown[0]:
            kind += ": " + _value_classes(first.shown[0])
    return Signature(item.id.split("/")[0].rpartition("-")[0], verdict.outcome.value, kind, item.dtype, indices)


DIAGNOSED = "diagnosed: "


def _model_order(diagnosis: Diagnosis) -> tuple[int, str]:
    """Single models before readings and pairs, in the library's order: the same choice for every
    configuration one bug hits."""
    return (ORDER.get(diagnosis.name, len(ORDER)), diagnosis.name)


def merged_by_diagnosis(clusters: list[Cluster]) -> list[Cluster]:
    """Diagnosed clusters that one defect model explains (their examples' diagnoses share a model,
    across operators) merge into one, and so do refusals and crashes with one diagnostic across
    element types: the first found stands for them, with their hits summed."""
    groups: list[tuple[set[str], list[Cluster]]] = []
    kept = []
    for cluster in sorted(clusters, key=lambda c: c.found_after):
        names = {d.name for d in cluster.verdict.diagnosis} if cluster.signature.kind.startswith(DIAGNOSED) else set()
        if not names and cluster.signature.outcome != Outcome.FAIL.value:  # one diagnostic, whatever the type
            s = cluster.signature
            names = {f"{s.op}\0{s.outcome}\0{s.kind}"}
        if not names:
            kept.append(cluster)
            continue
        joined = [g for g in groups if g[0] & names]
        for g in joined:
            groups.remove(g)
        groups.append((names.union(*(g[0] for g in joined)), [c for g in joined for c in g[1]] + [cluster]))
    for _, members in groups:
        first = min(members, key=lambda c: c.found_after)
        kept.append(dataclasses.replace(first, hits=sum(c.hits for c in members)))
    return kept


def _value_classes(shown: str) -> str:
    """'Y[0, 1]: expected -inf (0x...), got -3.4e+38 (0x...)' -> 'expected -inf, got finite'."""
    match = re.search(r"expected (\S+?)(?: \(|,).*got (\S+?)(?: \(|$)", shown)
    if not match:
        return "values"
    return f"expected {_class(match.group(1))}, got {_class(match.group(2))}"


def _class(token: str) -> str:
    token = token.rstrip(",")
    if token in ("nan", "inf", "-inf", "-0.0", "0.0"):
        return token
    try:
        value = float(token)
    except ValueError:
        return "value"
    return "negative" if value < 0 else "positive"


class Fuzzer:
    """Fuzz ``backend`` (what runs the items: the backend itself or its isolated process)."""

    def __init__(self, backend: Backend, registry: dict[str, Ambiguity], targets: list[Target], seed: int = 0,
                 budget: int = DEFAULT_BUDGET, shrink: bool = True, shrink_s: float = DEFAULT_SHRINK_S,
                 stop_at_first: bool = False, reject_one_in: int = 6, probe: bool = True,
                 progress: Callable[[str], None] | None = None, deadline: float | None = None,
                 checkpoint: Callable[[FuzzRun], None] | None = None):
        """``deadline``: a time.monotonic() by which every phase ends (what is found by then
        stands, shrunk as far as it got); ``checkpoint``: called with the run each time a
        cluster is found or shrunk, so that a kill loses nothing written."""
        self.backend, self.registry, self.targets = backend, registry, targets
        self.seed, self.budget, self.shrink, self.shrink_s = seed, budget, shrink, shrink_s
        self.stop_at_first, self.reject_one_in, self.probe = stop_at_first, reject_one_in, probe
        self.progress = progress or (lambda line: None)
        self.deadline, self.checkpoint = deadline, checkpoint or (lambda run: None)
        self.run = FuzzRun(getattr(backend, "name", "?"), getattr(backend, "version", "?"), seed, budget)
        self.ctrl_c = False
        self.oracles = LastComputed()  # the oracle of the item judged last: a new cluster's keeps it
        self.known: dict[str, Signature | None | bool] = {}  # repr(config) -> its signature (False: no model)

    # ---- judging ----

    def judge(self, config: dict[str, Any]) -> tuple[Item, Verdict] | None:
        """The item and its verdict; None where the recipe makes no legal model."""
        try:
            item = build_item(config, self.registry)
            return item, evaluate(item, self.backend, 0, self.registry, store=self.oracles)
        except (NotDrawable, SuiteError):
            return None
        except CaseError as e:
            if "fails onnx.checker" in str(e):  # onnx's shape inference refuses a geometry the documents allow
                return None
            raise

    def _signature(self, config: dict[str, Any]) -> Signature | None | bool:
        """The configuration's signature (None: no failure; False: no legal model), judged once."""
        key = repr(config)
        if key not in self.known:
            judged = self.judge(config)
            self.known[key] = False if judged is None else signature_of(config, *judged)
        return self.known[key]

    # ---- the search, then one shrink per signature ----

    def fuzz(self) -> FuzzRun:
        # One context for the whole run: entering it empties hypothesis's cache of the constants
        # each kind of draw may take, which, computed again for every chunk, cost a third of a draw.
        with _without_local_constants():
            return self._fuzz()

    def _fuzz(self) -> FuzzRun:
        self.started = time.monotonic()
        self.found: dict[Signature, Cluster] = {}
        with _ctrl_c_remembered(self):
            return self._fuzz_until_stopped()

    def _fuzz_until_stopped(self) -> FuzzRun:
        try:
            if self.probe:
                self.targets = self.supported(self.targets)
            self.strata = strata(self.targets)
            self.strategies = {stratum: configurations(self.targets, self.reject_one_in, stratum)
                               for stratum in self.strata}  # built once: hypothesis validates each on its first draw
            if self.targets:
                self._search(self.found)
            for signature, cluster in self.found.items():
                if not self.shrink or self.stop_at_first or self._past_deadline():
                    continue
                self._shrink(cluster)
                cluster.selectors = self.selectors(cluster)
                self.progress(f"shrunk: {signature.describe()}; changing this makes it pass: "
                              f"{', '.join(cluster.matters) or '-'}")
                self._publish()
        except KeyboardInterrupt:
            self.run.stopped = "interrupted"
            self._publish(checkpoint=False)
            raise FuzzInterrupted(self.run) from None
        self._publish(checkpoint=False)
        return self.run

    def _publish(self, checkpoint: bool = True) -> None:
        """The clusters so far into the run, and the run to the checkpoint."""
        self.run.clusters = sorted(merged_by_diagnosis(list(self.found.values())), key=lambda c: (
            not c.signature.kind.startswith(DIAGNOSED), c.signature.op, c.signature.kind, c.signature.dtype))
        self.run.seconds = time.monotonic() - self.started
        if checkpoint:
            self.checkpoint(self.run)

    def _past_deadline(self) -> bool:
        if self.ctrl_c:  # pressed, and its KeyboardInterrupt lost (raised inside a gc callback, say)
            raise KeyboardInterrupt
        if self.deadline is not None and time.monotonic() >= self.deadline:
            if self.run.stopped == "budget":
                self.run.stopped = "max-time"
                self.progress("the deadline (--max-time) has come: what was found stands as it is")
            return True
        return False

    def supported(self, targets: list[Target]) -> list[Target]:
        """Each target restricted to the element types the backend runs (one tiny model each).
        ``probe=False`` takes the targets as already restricted so."""
        kept = []
        for target in targets:
            port = "T1" if target.op == "MaxUnpool" else "T"
            dtypes = []
            for dtype in target.dtypes or target.signature.types[port]:
                if self._past_deadline():
                    dtypes.append(dtype)  # left unprobed: the search ends at once anyway
                    continue
                judged = self.judge(_tiny(target, dtype))
                if judged and judged[1].outcome is Outcome.UNSUPPORTED:
                    self.run.unsupported.append(f"{target.label}[{dtype}]")
                else:
                    dtypes.append(dtype)
            if dtypes:
                kept.append(Target(target.domain, target.op, target.version, tuple(dtypes)))
        return kept

    def _hypothesis(self, check: Callable[[dict[str, Any]], None], phases: list[Phase], chunk: int) -> None:
        """Run ``check`` on chunk ``chunk`` of the run's deterministic sequence of configurations
        (the same for the search and each shrink, up to the first example a shrink is after).
        Short chunks, each from a seed of its own, keep the draws diverse: a long hypothesis run
        mutates its earlier examples more and more."""
        @settings(max_examples=CHUNK, database=None, deadline=None, phases=phases, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
        @hypothesis_seed(self.seed * 1_000_003 + chunk)
        @given(self.strategies[self.strata[chunk % len(self.strata)]])
        def search(config):
            check(config)

        try:
            search()
        except (_Stop, _Found, Unsatisfiable, Flaky):
            pass

    def _search(self, found: dict[Signature, Cluster]) -> None:
        run, started = self.run, self.started

        def check(config: dict[str, Any]) -> None:
            if run.judged >= self.budget or self._past_deadline():
                raise _Stop
            if repr(config) in self.known:  # drawn before (each chunk starts with the simplest configuration)
                if self.known[repr(config)] is False:
                    reject()
                return
            t0 = time.monotonic()
            judged = self.judge(config)
            if judged is None:
                self.known[repr(config)] = False
                run.discarded += 1
                reject()
            item, verdict = judged
            run.judged += 1
            run.search_seconds += time.monotonic() - t0
            run.outcomes[verdict.outcome.value] = run.outcomes.get(verdict.outcome.value, 0) + 1
            signature = self.known[repr(config)] = signature_of(config, item, verdict)
            if signature is None:
                return
            if signature in found:
                found[signature].hits += 1
                return
            found[signature] = Cluster(signature, config, item, verdict, 1, run.judged,
                                       round(time.monotonic() - started, 3), chunk=state["chunk"],
                                       values=self.oracles.script_values(item, 0))
            self.progress(f"found after {run.judged} configurations: {signature.describe()}")
            self._publish()
            if self.stop_at_first:
                raise _Stop

        state = {"chunk": 0}
        while run.judged < self.budget and not (self.stop_at_first and found) and not self._past_deadline():
            before = run.judged
            self._hypothesis(check, [Phase.generate], state["chunk"])
            state["chunk"] += 1
            if run.judged == before and state["chunk"] > 10 * (self.budget // CHUNK + 1):
                break  # the space is exhausted (every draw is a repeat or makes no model)

    def _shrink(self, cluster: Cluster) -> None:
        """Replay the search until the cluster's first example, then let hypothesis shrink it,
        keeping its signature; after ``shrink_s`` seconds the smallest so far stands."""
        wanted, raised = cluster.signature, set[str]()
        best: dict[str, dict[str, Any] | None] = {"config": None}
        started = time.monotonic()

        def check(config: dict[str, Any]) -> None:
            key = repr(config)
            if not raised and self._past_deadline():  # replaying up to the example took the time left
                raise _Stop
            if raised and (time.monotonic() - started > self.shrink_s or self._past_deadline()):
                if key in raised:  # the same answer as before, or hypothesis calls it flaky
                    raise _Found
                return
            signature = self._signature(config)
            if signature is False:
                reject()
            if signature == wanted:
                raised.add(key)
                best["config"] = config
                raise _Found

        self._hypothesis(check, [Phase.generate, Phase.shrink], cluster.chunk)
        if best["config"] is not None:
            judged = self.judge(best["config"])
            if judged and signature_of(best["config"], *judged) == wanted:
                cluster.config, (cluster.item, cluster.verdict) = best["config"], judged
                cluster.values = self.oracles.script_values(cluster.item, 0)

    # ---- which selectors matter ----

    def selectors(self, cluster: Cluster) -> list[dict[str, str]]:
        """Vary each selector of the minimal configuration: does the failure stay, change or go?"""
        results = []
        for selector, changed in variations(cluster.config):
            if self._past_deadline():
                break
            judged = self.judge(changed)
            if judged is None or judged[1].outcome in (Outcome.UNSUPPORTED, Outcome.DIVERGENT):
                effect = "n/a"
            else:
                signature = signature_of(changed, *judged)
                effect = "passes" if signature is None else "same" if signature == cluster.signature else "other failure"
            results.append({"selector": selector, "effect": effect})
        return results


def _tiny(target: Target, dtype: str) -> dict[str, Any]:
    kernel = "kernel" if target.domain == "org.openvinotoolkit" else "kernel_shape"
    attributes: dict[str, Any] = {kernel: [1]}
    if target.domain == "org.openvinotoolkit":
        attributes.update(strides=[1], pads_begin=[0], pads_end=[0])
    filling = {"seed": 0, "base": "distinct", "rate": 0.0, "palette": [0]}
    config = {"target": target, "dtype": dtype, "shape": [1, 1, 2], "attributes": attributes,
              "outputs": ["output" if target.op == "MaxUnpool" else "Y"], "filling": filling}
    if target.op == "MaxUnpool":
        config.update(form="indices", output_shape_growth=None)
    return config


def variations(config: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(selector = value, the configuration with it) for each selector a kernel may branch on."""
    target, a, shape = config["target"], config["attributes"], config["shape"]
    sig = target.signature
    port = "T1" if target.op == "MaxUnpool" else "T"
    for dtype in target.dtypes or sig.types[port]:
        if dtype != config["dtype"] and not config.get("reject"):
            palette = palette_as(config["filling"]["palette"], dtype)
            if palette is not None:
                yield f"dtype={dtype}", with_changes(config, dtype=dtype, filling=dict(config["filling"], palette=palette))
    if sig.port("Indices") and not config.get("reject"):
        outputs = ["Y"] if "Indices" in config["outputs"] else ["Y", "Indices"]
        yield f"indices={'no' if len(outputs) == 1 else 'yes'}", with_changes(config, outputs=outputs)

    def attribute(selector: str, name: str, value: Any):
        changed = dict(a)
        if value is None:
            changed.pop(name, None)
        else:
            changed[name] = value
        return selector, with_changes(config, attributes=changed)

    rank = len(shape) - 2
    if any(s > 1 for s in a.get("strides", ())):
        yield attribute("strides=1", "strides", [1] * rank)
    elif "strides" in a or "kernel" not in a:
        yield attribute("strides=2", "strides", [2] * rank)
    for name in ("pads", "dilations", "auto_pad", "ceil_mode", "storage_order", "axis",
                 "index_element_type", "rounding_type"):
        if name in a and name not in sig.required:
            yield attribute(f"{name} omitted", name, None)
    if "activation" in a:
        yield "activation omitted", with_changes(config, attributes={k: v for k, v in a.items()
                                                                       if not k.startswith("activation")})
    if "pads_begin" in a and any(a["pads_begin"] + a["pads_end"]):
        yield "pads=0", with_changes(config, attributes=dict(a, pads_begin=[0] * rank, pads_end=[0] * rank))
    if shape[0] != 1:
        yield "N=1", with_changes(config, shape=[1] + shape[1:])
    if shape[1] != 1:
        yield "C=1", with_changes(config, shape=[shape[0], 1] + shape[2:])
    if shape[1] % 8 == 0:
        yield f"C={shape[1] + 1}", with_changes(config, shape=[shape[0], shape[1] + 1] + shape[2:])
    else:
        yield "C=8", with_changes(config, shape=[shape[0], 8] + shape[2:])
    if rank > 1 and not config.get("reject"):
        yield f"rank={rank - 1}", with_changes(config, **on_axes(config, list(range(rank - 1))))
    filling = config["filling"]
    if filling["rate"]:
        yield "no special values", with_changes(config, filling=dict(filling, rate=0.0))
        for value in dict.fromkeys(map(repr, filling["palette"])):
            rest = [v for v in filling["palette"] if repr(v) != value]
            if rest:
                yield f"without {value}", with_changes(config, filling=dict(filling, palette=rest))
    if filling["base"] == "ties":
        yield "distinct values", with_changes(config, filling=dict(filling, base="distinct"))


def palette_as(palette: list, dtype: str) -> list | None:
    """The special values that ``dtype`` can hold (None: none can, the variation does not apply)."""
    if not DTYPES[dtype].is_integer:
        kept = []
        for v in palette:
            try:  # a value beyond the type's range (float32's lowest in float16) is left out
                kept.append(float(DTYPES[dtype].cast([v])[0]) if math.isfinite(v) else v)
            except ValueError:
                continue
        return kept or None
    info = np.iinfo(DTYPES[dtype].numpy)
    kept = [int(v) for v in palette if math.isfinite(v) and v == int(v) and info.min <= v <= info.max]
    return kept or None

"""The pytest plugin: ``pytest conformance --backend=NAME`` collects the case files as items.

Each item's report location is its case's YAML line; its failure text is the diff and ends
with a command that reruns it. Outcomes appear under their own names in pytest's summary:
``divergent`` and ``xfail`` items pass, ``unsupported`` ones are skipped; ``fail``, ``error``,
``crash``, ``timeout`` and ``xpass`` fail. With several backends (``--backend=reference,ort``)
every item runs on each, and its id ends in ``@backend``.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

from .backends import Backend, BackendNotFound, load_backend, split_specs
from .backends.isolated import InProcessBackend, IsolatedBackend
from .expand.cache import expand_file, expansion_cache
from .expand.items import Item
from .judge.expectations import Expectations, file_names, load_expectations, load_skips
from .judge.lock import Lock, lock_path
from .judge.verdict import SuiteError, Verdict, evaluate
from .load.cases import REGISTRY_FILE, CaseError, bundled_case_dir, case_files, escaped, load_registry
from .load.limits import NAMES as LIMIT_NAMES
from .load.limits import parse_limits
from .outcomes import FAILING, Outcome
from .report.scripts import command as repro_command
from .report.writer import (FUZZ_RUN, ReportDirectory, ReportError, Results, bounded, environment, header_lines, item_record,
                            write_reports)

PACKAGE_DIR = Path(__file__).resolve().parent
RECORD = "conformance"
STATE = pytest.StashKey["SuiteSession"]()
DEFAULT_SEED = 0
DEFAULT_TIMEOUT_S = 60
DEFAULT_MEMORY_LIMIT_MIB = 8192
# (category, progress letter, verbose word) for pytest's summary
STATUS = {
    Outcome.PASS: ("passed", ".", "PASSED"),
    Outcome.DIVERGENT: ("divergent", "d", "DIVERGENT"),
    Outcome.XFAIL: ("xfail", "x", "XFAIL"),
    Outcome.UNSUPPORTED: ("unsupported", "u", "UNSUPPORTED"),
    Outcome.SKIPPED: ("skipped", "s", "SKIPPED"),
    Outcome.FAIL: ("failed", "F", "FAILED"),
    Outcome.ERROR: ("error", "E", "ERROR"),
    Outcome.CRASH: ("crash", "C", "CRASH"),
    Outcome.TIMEOUT: ("timeout", "T", "TIMEOUT"),
    Outcome.XPASS: ("xpass", "X", "XPASS"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "ONNX max-pooling conformance suite")
    group.addoption("--backend", default="reference",
                    help="backend(s) under test, comma-separated: names registered in the conformance.backends "
                         "entry-point group (reference, ort) or package.module:ClassName (default: reference)")
    group.addoption("--cases", type=Path, default=None,
                    help="run the case files in this directory instead of the bundled ones")
    group.addoption("--report", type=Path, default=None,
                    help="write DIR/results.json, DIR/report.html and DIR/summary.md")
    group.addoption("--expectations", type=Path, default=None,
                    help="known failures: a file, or a directory holding <backend>.yaml per backend")
    group.addoption("--seed", type=int, default=DEFAULT_SEED,
                    help=f"seed of the random inputs (default {DEFAULT_SEED})")
    group.addoption("--isolation", choices=("process", "none"), default="process",
                    help="run the backend in a child process, so that a crash or hang costs one item "
                         "(default), or in the test process")
    # Generic names (--timeout: pytest-timeout's) would collide with other plugins: ours are prefixed.
    group.addoption("--conformance-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                    help=f"seconds an isolated backend may take per item (default {DEFAULT_TIMEOUT_S})")
    group.addoption("--conformance-memory-limit", type=int, default=DEFAULT_MEMORY_LIMIT_MIB, metavar="MIB",
                    help=f"address-space limit of the isolated backend's process, 0 for none "
                         f"(default {DEFAULT_MEMORY_LIMIT_MIB})")
    group.addoption("--conformance-fuzz", type=int, default=None, metavar="BUDGET",
                    help="instead of the case files, fuzz each backend with BUDGET configurations (conformance fuzz)")
    group.addoption("--conformance-fuzz-out", type=Path, default=None, metavar="DIR",
                    help="with --conformance-fuzz: write each cluster's case and repro script to DIR/<backend>/")
    group.addoption("--conformance-limit", action="append", default=[], metavar="NAME=N",
                    help="raise (or lower) a budget of case-file reading, repeatable: "
                         + ", ".join(LIMIT_NAMES) + " (docs/case-format.md: budgets)")


@dataclass
class BackendUnderTest:
    spec: str  # as given to --backend
    backend: Backend  # loaded here, for its name, version and details
    runner: InProcessBackend | IsolatedBackend  # what runs the items: the backend in this process or in its own
    expectations: Expectations | None
    skips: Expectations | None  # items never run: they hang the backend


class SuiteSession:
    """The run's backends, seed and results; its hooks act only when the suite is requested."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.seed = config.getoption("seed")
        expectations = config.getoption("expectations")
        if expectations is not None and not expectations.exists():
            raise pytest.UsageError(f"--expectations {expectations}: no such file or directory")
        self.item_ids: set[str] = set()  # every item the case files produce, selected or not
        self.stale: dict[str, str] = {}  # "file:line" -> match, of expectations that match no item
        self.marks: dict[str, pytest.Mark] = {}
        self.case_dir = (config.getoption("cases") or bundled_case_dir()).resolve()
        if not self.case_dir.is_dir():
            raise pytest.UsageError(f"--cases {self.case_dir}: not a directory")
        try:
            self.limits = parse_limits(config.getoption("conformance_limit"))
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
        self.targets = [self._target(spec) for spec in split_specs(config.getoption("backend"))]
        if len({t.spec for t in self.targets}) != len(self.targets):
            raise pytest.UsageError("--backend names a backend twice")
        self.env = environment([(t.backend, t.runner) for t in self.targets], self.seed, self.case_dir)
        self.finished = self.interrupted = False
        # pytest's cache (-p no:cacheprovider turns it off) keeps the loaded case files between runs
        self.expansions = expansion_cache(config, self.case_dir, self.limits)
        report_dir = config.getoption("report")
        self.report_dir: Any = report_dir if not hasattr(config, "workerinput") else None  # a Path, on the controller
        # Claimed and written before the first item: a bad path is a usage error, and a run
        # stopped at any moment from here on leaves a report (never an older run's).
        self.directory = None
        self.fuzz_runs: list[dict] = []  # --conformance-fuzz: each run as results.json keeps it
        if config.getoption("conformance_fuzz") is not None and config.getoption("conformance_fuzz") < 1:
            raise pytest.UsageError("--conformance-fuzz: the budget must be at least 1")
        try:
            if self.report_dir is not None:
                self.directory = ReportDirectory.claim(self.report_dir)
            self.results = Results(self.env, self.directory)
            if self.directory is not None:
                self.results.write(partial=True)
        except ReportError as e:
            if self.directory is not None:
                self.directory.release()
            raise pytest.UsageError(f"--report {report_dir}: {e}") from None
        # The bundled cases at the default seed: each derived expectation must be as locked.
        bundled = self.case_dir == bundled_case_dir().resolve() and self.seed == DEFAULT_SEED
        self.lock = Lock(lock_path()) if bundled else None
        self.pending: dict[str, dict] = {}  # node id -> record, from setup until the call's report

    def _target(self, spec: str) -> BackendUnderTest:
        config = self.config
        try:
            backend = load_backend(spec)
        except (BackendNotFound, ImportError) as e:
            raise pytest.UsageError(f"--backend={spec}: {e}") from None
        runner: InProcessBackend | IsolatedBackend = InProcessBackend(backend)
        if config.getoption("isolation") == "process":
            runner = IsolatedBackend(spec, backend.name, backend.version,
                                     config.getoption("conformance_timeout"),
                                     config.getoption("conformance_memory_limit") or None)
        expectations = skips = None
        if config.getoption("expectations") is not None:
            try:
                expectations, skips = (load(config.getoption("expectations"), backend.name,
                                            fallback=spec.partition("[")[0], details=backend.details())
                                       for load in (load_expectations, load_skips))
            except CaseError as e:
                raise pytest.UsageError(f"--expectations: {e}") from None
        return BackendUnderTest(spec, backend, runner, expectations, skips)

    def expectation_lines(self) -> list[str]:
        """Which files of --expectations each backend reads, and how many entries apply."""
        path = self.config.getoption("expectations")
        lines = []
        for target in self.targets:
            names = file_names(target.backend.name, target.spec.partition("[")[0])
            found = [f"{e.file} ({len(e.entries)} {'entry' if len(e.entries) == 1 else 'entries'})"
                     for e in (target.expectations, target.skips) if e]
            looked = (f"{path}/{names[0]}.yaml" if path.is_dir() else str(path))
            lines.append(f"conformance expectations of {target.spec}: " + (", ".join(found) or f"none ({looked} not found)"))
        return lines

    def mark(self, name: str, meaning: str) -> pytest.Mark:
        """The Mark of this name, registered (for --strict-markers and `pytest --markers`) when first met."""
        if name not in self.marks:
            self.config.addinivalue_line("markers", f"{name}: conformance items: {meaning}")
            self.marks[name] = getattr(pytest.mark, name).mark
        return self.marks[name]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.directory is not None:  # with the collection errors
            self.results.checkpoint()
        if self.config.getoption("lf", False) or not self.item_ids:
            return  # --lf collects only the files that failed: every entry would look stale
        for target in self.targets:
            for listing in (target.expectations, target.skips):
                for entry in listing.stale(self.item_ids) if listing else ():
                    self.stale[entry.where] = entry.match
        if hasattr(self.config, "workeroutput"):
            self.config.workeroutput["conformance_stale"] = self.stale

    def pytest_testnodedown(self, node, error) -> None:
        self.stale.update(getattr(node, "workeroutput", {}).get("conformance_stale", {}))

    def repro(self, item_id: str, spec: str) -> str:
        suite = ["--pyargs", "conformance"] if self.config.option.pyargs else ["conformance"]
        words = ["pytest", *suite, f"--backend={spec}", f"--seed={self.seed}"]
        if self.case_dir != bundled_case_dir().resolve():
            words.append(f"--cases={self.case_dir}")
        if self.config.getoption("expectations") is not None:
            words.append(f"--expectations={self.config.getoption('expectations')}")
        return shlex.join(words + ["-k", item_id])

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        for target in self.targets:
            if target.runner is not target.backend:
                target.runner.close()
        self.finished = True
        if self.directory is not None:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
            try:
                if self.fuzz_runs:
                    from .fuzz.command import write_fuzz_documents
                    write_fuzz_documents(self.env, self.fuzz_runs, self.report_dir, base=self.results)
                else:
                    write_reports(self.results, partial=interrupted, interrupted=interrupted)
            except ReportError as e:  # a full disk, say: one line, and the run cannot pass
                self.config.get_terminal_writer().line(f"conformance: {e}", red=True)
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            self.directory.release()

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    def pytest_unconfigure(self) -> None:
        """A run stopped before its session began (Ctrl-C while xdist starts its workers) gets no
        pytest_sessionfinish: its report still says how it ended."""
        if self.directory is not None and not self.finished:
            self.results.checkpoint(interrupted=self.interrupted)
            self.directory.release()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self) -> None:
        if self.directory is not None and not self.results.records:
            self.results.checkpoint()


    def pytest_report_header(self) -> list[str]:
        extra = self.expectation_lines() if self.config.getoption("expectations") is not None else []
        if self.lock is not None and self.lock.problem is not None:  # every derived item will say so too
            extra.append(f"conformance WARNING: the derived expectations cannot be checked: {self.lock.problem}")
        return header_lines(self.env) + extra

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        if file_path == PACKAGE_DIR / "__init__.py" and self.config.getoption("conformance_fuzz") is not None:
            from .fuzz.pytest_items import FuzzSuite
            return FuzzSuite.from_parent(parent, path=self.case_dir, session_state=self)
        if file_path == PACKAGE_DIR / "__init__.py":
            return Suite.from_parent(parent, path=self.case_dir)
        return None

    def pytest_report_teststatus(self, report: pytest.TestReport):
        record = _record(report)
        if report.when == "call" and record and "outcome" in record:
            return STATUS[Outcome(record["outcome"])]
        return None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.results.add_collection_error(report.nodeid, str(report.longrepr))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        fuzz_run = dict(getattr(report, "user_properties", ())).get(FUZZ_RUN)
        if fuzz_run is not None and report.when == "call":
            self.fuzz_runs.append(json.loads(fuzz_run))
        record = _record(report)
        if record is None:  # not one of the suite's items, or the report of a lost worker (recorded below)
            return
        if report.when == "setup":
            self.pending[report.nodeid] = record
        if report.when == "call":
            self.pending.pop(report.nodeid, None)
            self.results.add(dict(record, duration_s=round(report.duration, 6)))
        elif report.when == "setup" and report.failed:
            message = str(report.longrepr).strip().splitlines()[-1] if report.longrepr else "setup failed"
            self.results.add(dict(record, outcome=Outcome.ERROR.value, message=message))

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched) -> None:
        """pytest-xdist lost the worker running ``crashitem`` (SIGKILL, the OOM killer, a crash
        with --isolation=none): the item is a ``crash``, whether or not its setup had reported."""
        record = self.pending.pop(crashitem, None) or self._record_of(crashitem)
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "?")
        message = (f"the pytest-xdist worker {worker!r} running this item died (killed, or its process crashed); "
                   "no answer was judged")
        if record is not None:
            self.results.add(dict(record, outcome=Outcome.CRASH.value, message=message))
        else:  # not an item of the suite's (a fuzz test): still never lost
            self.results.add_collection_error(crashitem, message)

    def _record_of(self, node_id: str) -> dict | None:
        """An item's record from its node id alone: the controller of an xdist run collects
        nothing, and a worker killed during setup has sent nothing."""
        *parents, name = node_id.split("::")
        item_id, _, spec = name.partition("@")
        target = next((t for t in self.targets if t.spec == spec), None) if spec else self.targets[0]
        files = case_files(self.case_dir)
        named = [f for f in files if parents and f.name == parents[-1]]  # ids are unique: any file would do
        try:
            registry = load_registry(self.case_dir, self.limits)
            expanded = self.expansions.items if self.expansions else expand_file
            items = [i for file in named or files for i in expanded(file, registry, self.limits)]
        except CaseError:
            return None
        item = next((i for i in items if i.id == item_id), None)
        if item is None or target is None:
            return None
        return dict(item_record(item, self.case_dir), backend=target.backend.name,
                    backend_version=target.backend.version)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.stale:
            terminalreporter.section("conformance: stale expectations (they match no item)")
            for where, match in sorted(self.stale.items()):
                terminalreporter.write_line(f"{where}: {match}")
        records = self.results.records
        if not records:
            return
        several = len(self.targets) > 1
        table = Counter((r["op"], r["version"], r["backend"], r["outcome"]) for r in records)
        outcomes = [o.value for o in Outcome if any(k[3] == o.value for k in table)]
        terminalreporter.section("conformance: items per op version" + (" and backend" if several else ""))
        label = "op-version@backend" if several else "op-version"
        terminalreporter.write_line(f"{label:<30}" + "".join(f"{o:>12}" for o in outcomes) + f"{'total':>8}")
        for op, version, backend in sorted({k[:3] for k in table}):
            counts = [table[op, version, backend, o] for o in outcomes]
            row = f"{op}-{version}" + (f"@{backend}" if several else "")
            terminalreporter.write_line(f"{row:<30}" + "".join(f"{c:>12}" for c in counts) + f"{sum(counts):>8}")
        if self.report_dir is not None:
            terminalreporter.write_line(f"conformance report: {self.report_dir}/ (results.json, report.html, summary.md)")


def _suite_requested(config: pytest.Config) -> bool:
    for arg in config.args:
        target = arg.split("::")[0]
        if config.option.pyargs and target == PACKAGE_DIR.name:
            return True
        path = Path(config.invocation_params.dir, target).resolve()
        if path == PACKAGE_DIR or PACKAGE_DIR in path.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    if _suite_requested(config):
        # A malformed case file is reported and the other files still run.
        config.option.continue_on_collection_errors = True
        session = SuiteSession(config)
        config.stash[STATE] = session
        config.pluginmanager.register(session, "conformance-session")


class CaseErrorsInOneLine:
    """A malformed case file or registry is reported as its one-line CaseError, no traceback."""

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CaseError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class Suite(CaseErrorsInOneLine, pytest.Directory):  # type: ignore[misc]  # the mixin's repr_failure takes no style
    """The case directory: one collector per case file."""

    def collect(self):
        state = self.config.stash[STATE]
        load = state.expansions.registry if state.expansions else load_registry
        try:
            self.registry = load(state.case_dir, state.limits)
        except CaseError as e:
            if e.file == bundled_case_dir() / REGISTRY_FILE:
                raise
            # The directory's own registry is broken: one line for it, and the case files run
            # against the bundled registry (a case naming one of its entries gets its own line).
            self.registry = load(bundled_case_dir(), state.limits)
            yield BrokenRegistry.from_parent(self, path=e.file, error=e)
        self.seen: dict[str, Path] = {}
        for file in case_files(state.case_dir):
            node = CaseFile.from_parent(self, path=file)
            if not node.nodeid.isprintable():  # a name with a newline must not fake a location
                node = CaseFile.from_parent(self, path=file, name=escaped(node.name), nodeid=escaped(node.nodeid))
            yield node


class BrokenRegistry(CaseErrorsInOneLine, pytest.File):  # type: ignore[misc]  # as Suite
    """A case directory's ``ambiguities.yaml`` that does not load: its error, as a collection error."""

    def __init__(self, *, error: CaseError, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def collect(self):
        raise self.error


class CaseFile(CaseErrorsInOneLine, pytest.File):  # type: ignore[misc]  # as Suite
    def collect(self):
        suite: Suite = self.parent
        state = self.config.stash[STATE]
        targets = state.targets
        expanded = state.expansions.items if state.expansions else expand_file
        for item in expanded(self.path, suite.registry, state.limits):
            if item.id in suite.seen:
                raise item.case.error((), f"item id {item.id} is also produced by {suite.seen[item.id]}")
            suite.seen[item.id] = self.path
            state.item_ids.add(item.id)
            for target in targets:
                name = item.id if len(targets) == 1 else f"{item.id}@{target.spec}"
                # The id given whole: pytest >= 9 would otherwise read "[float32]" as parameters
                # on the cache's side only, and --lf/--ff would find no previous failure.
                yield ConformanceItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", item=item,
                                                  target=target)


class ConformanceFailure(Exception):
    def __init__(self, verdict: Verdict):
        self.verdict = verdict


class ConformanceItem(pytest.Item):
    def __init__(self, *, item: Item, target: BackendUnderTest, **kwargs):
        super().__init__(**kwargs)
        self.item, self.target = item, target
        # One shared Mark per name: add_marker() per item would cost a second per run.
        self.own_markers.extend(self.config.stash[STATE].mark(name, meaning) for name, meaning in markers(item))

    @cached_property
    def record(self) -> dict:
        """Built when the item runs: a run selecting one item with -k builds one."""
        record = item_record(self.item, self.config.stash[STATE].case_dir)
        record.update(backend=self.target.backend.name, backend_version=self.target.backend.version)
        return record

    def setup(self) -> None:
        self.user_properties.append((RECORD, json.dumps(self.record)))

    def runtest(self) -> None:
        try:
            self._run()
        finally:  # the record as the item ended, as JSON: JUnit XML shows it as such
            self.user_properties[:] = [(k, v) for k, v in self.user_properties if k != RECORD]
            self.user_properties.append((RECORD, json.dumps(self.record)))

    def _run(self) -> None:
        state = self.config.stash[STATE]
        skip = self.target.skips.find(self.item.id) if self.target.skips else None
        if skip is not None:
            self.record.update(outcome=Outcome.SKIPPED.value, message=f"{skip.reason} ({skip.where})",
                               expectation=skip.as_json())
            pytest.skip(f"skipped: {skip.reason} ({skip.where})")
        try:
            verdict = evaluate(self.item, self.target.runner, state.seed,
                               self.parent.parent.registry, state.lock)  # type: ignore[union-attr]  # Suite > CaseFile > item
        except Exception as e:  # the suite's own fault, not the backend's: shown in full, and the run fails
            self.record.update(outcome=Outcome.ERROR.value, message=f"suite error: {type(e).__name__}: {e}",
                               suite_error=True)
            raise
        if self.target.expectations is not None:
            verdict, known = self.target.expectations.apply(self.item.id, verdict)
            if known is not None:
                self.record["expectation"] = known.as_json()
        self.record.update(outcome=verdict.outcome.value, message=verdict.message, ambiguity=verdict.ambiguities)
        if verdict.reading is not None:
            self.record["reading"] = verdict.reading
        if verdict.readings:
            self.record["readings"] = verdict.readings
        if verdict.mismatches:
            self.record["diff"] = [m.as_json() for m in verdict.mismatches]
        elif verdict.details.strip() and verdict.details.strip() != verdict.message:  # an error's whole text
            self.record["reason"] = bounded(verdict.details.strip())
        if verdict.outcome is not Outcome.PASS:
            self.record["repro"] = state.repro(self.item.id, self.target.spec)
            self.record["script"] = repro_command(self.item.id, self.target.spec, state.seed, state.case_dir)
        if verdict.outcome is Outcome.UNSUPPORTED:
            pytest.skip(f"unsupported: {verdict.message}")
        if verdict.outcome in FAILING:
            raise ConformanceFailure(verdict)

    def repr_failure(self, excinfo):
        state = self.config.stash[STATE]
        if isinstance(excinfo.value, ConformanceFailure):
            verdict = excinfo.value.verdict
            body = verdict.details or verdict.message
            if verdict.outcome is Outcome.XPASS:
                body = verdict.message
        elif isinstance(excinfo.value, (CaseError, SuiteError)):
            body = f"suite error: {excinfo.value}"
        else:
            return super().repr_failure(excinfo)
        case = self.item.case
        return "\n".join([
            f"{self.name}: {case.description}",
            f"case: {case.file}:{case.line} ({_provenance(case.provenance)})",
            f"attributes: {case.attributes}",
            "inputs: " + ", ".join(f"{i.name} {i.dtype.name}{list(i.shape)}" for i in self.item.inputs),
            f"expected: {self.item.expectation}",
            "",
            body,
            "",
            f"repro: {state.repro(self.item.id, self.target.spec)}",
        ])

    def reportinfo(self):
        return self.item.case.file, self.item.case.line - 1, self.name


def _record(report) -> dict | None:
    record = dict(getattr(report, "user_properties", ())).get(RECORD)
    return json.loads(record) if record else None


def markers(item: Item) -> list[tuple[str, str]]:
    """The item's markers and what they mean, for -m: operator, version, domain, element type, and
    where its expectation comes from (``-m "maxpool and version22 and bfloat16 and literal"``)."""
    case = item.case
    return [(case.op.lower(), f"the operator {case.op}"),
            (f"version{item.version}", f"operator version {item.version}"),
            (case.domain.replace(".", "_"), f"the domain {case.domain}"),
            (item.dtype, f"element type {item.dtype}"),
            (item.expectation, EXPECTATION_KINDS[item.expectation])]


EXPECTATION_KINDS = {"literal": "the expected values are transcribed from a document, or worked out by hand",
                     "derived": "the expected values are computed by the reference backend",
                     "reject": "the model is invalid: a conforming backend refuses it"}


def _provenance(provenance: dict) -> str:
    if "generated" in provenance:
        return "generated: " + " ".join(provenance["generated"].split())
    return f"{provenance['document']}: {provenance['example']}"

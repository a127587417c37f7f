"""The run's state: its backends under test, seed, case directory, results and report, and the
hooks that keep them (results as items report, a lost worker's item as a crash, the report at the end)."""

from __future__ import annotations

import json
import re
import shlex
import time
import zlib
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..backends import Backend, BackendNotFound, load_backend, split_specs
from ..backends.isolation.in_process import InProcessBackend
from ..backends.isolation.runner import IsolatedBackend
from ..expand.cache import expand_file, expansion_cache
from ..expand.items import Item
from ..judge.expectations import Expectations, load_expectations, load_skips
from ..judge.diagnoses import BUDGET
from ..judge.lock import Lock, lock_path
from ..judge.oracle import ScriptValues, script_values
from ..load.cases import CaseError, bundled_case_dir, case_files, load_registry
from ..load.limits import ReadRefused, parse_limits, read_regular
from ..outcomes import Outcome
from ..scripts.runners import adapter_directory
from ..report.record import ItemRecord, item_record
from ..report.writer import ReportDirectory, ReportError, Results, environment, write_reports
from .options import DEFAULT_SEED

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the conformance package: pytest collects the suite from it
RECORD = "conformance"  # the user property that carries an item's record from its worker to the controller
STATE = pytest.StashKey["SuiteSession"]()


@dataclass
class BackendUnderTest:
    spec: str  # as given to --backend
    backend: Backend  # loaded here, for its name, version and details
    runner: InProcessBackend | IsolatedBackend  # what runs the items: the backend in this process or in its own
    expectations: Expectations | None
    skips: Expectations | None  # items never run: they hang the backend


# pytest's -k word (_pytest/mark/expression.py): what it matches, case-insensitively, as a part
# of the name of an item, of one of its collectors, or of one of its markers
KEYWORD_WORD = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")


def name_part_of(expression: str) -> str | None:
    """The part of an item's name that ``-k`` asks for, where only items' names can hold it:
    a single word with a "/", as every item id has and no file, directory or marker name can
    (a pasted repro line). Collection then builds only the items whose names hold it, and the
    selection is the one pytest would make among all of them."""
    word = expression.strip()
    if "/" in word and KEYWORD_WORD.fullmatch(word):
        return word.lower()
    return None


MAX_ID_FILE_BYTES = 16 << 20


MAX_SHARDS = 100_000  # more machines than items would leave shards empty; a bound keeps int() cheap
MAX_RERUNS = 20  # a crash met 21 times in a row is deterministic enough; each rerun starts a process
_SHARD = re.compile(r"([0-9]{1,6})/([0-9]{1,6})", re.ASCII)  # ASCII digits: "²" is isdigit() but no int()


def shard_of(text: str | None) -> tuple[int, int] | None:
    """``I/N`` -> (I - 1, N); a usage error in one line for anything else."""
    if text is None:
        return None
    found = _SHARD.fullmatch(text)
    if not (found and 1 <= int(found[1]) <= int(found[2]) <= MAX_SHARDS):
        raise pytest.UsageError(f"--conformance-shard {text[:40]}: give I/N with 1 <= I <= N <= {MAX_SHARDS:,}, "
                                "e.g. 2/4")
    return int(found[1]) - 1, int(found[2])


def reruns_of(count: int) -> int:
    """--conformance-rerun-crashes, within 0 to MAX_RERUNS: a usage error in one line otherwise."""
    if not 0 <= count <= MAX_RERUNS:
        raise pytest.UsageError(f"--conformance-rerun-crashes {count}: give 0 to {MAX_RERUNS}")
    return count


def in_shard(item_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether the item falls in the shard: by a checksum of its id, the same on every machine."""
    return shard is None or zlib.crc32(item_id.encode()) % shard[1] == shard[0]


def exact_ids(given: list[str]) -> frozenset[str]:
    """The ids of --conformance-id, with each @FILE read (one id a line, blank lines and #
    comments skipped); a file that cannot be read is a usage error in one line."""
    ids: set[str] = set()
    for word in given:
        if word.startswith("@"):
            try:
                text = read_regular(Path(word[1:]), MAX_ID_FILE_BYTES).decode("utf-8")
            except (ReadRefused, UnicodeDecodeError) as e:
                raise pytest.UsageError(f"--conformance-id {word}: {getattr(e, 'message', e)}") from None
            ids.update(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
        else:
            ids.add(word)
    return frozenset(ids)


class SuiteSession:
    """The run's backends, seed and results; its hooks act only when the suite is requested."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.seed = config.getoption("seed")
        expectations = config.getoption("expectations")
        if expectations is not None and not expectations.exists():
            raise pytest.UsageError(f"--expectations {expectations}: no such file or directory")
        self._select(config)
        budget = config.getoption("conformance_diagnosis_budget")
        if not 0 <= budget < float("inf"):
            raise pytest.UsageError(f"--conformance-diagnosis-budget {budget}: give seconds, 0 or more (0: no diagnosis)")
        BUDGET.left = budget
        self.explain_budget = config.getoption("conformance_explain_budget")
        if self.explain_budget is not None and not 0 <= self.explain_budget < float("inf"):
            raise pytest.UsageError(f"--conformance-explain-budget {self.explain_budget}: give seconds, 0 or more "
                                    "(0: no explanation)")
        self.started = time.monotonic()
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
        self.label = config.getoption("conformance_label")
        if self.label is not None and not re.fullmatch(r"[\w.+@=,\[\]-]{1,100}", self.label):
            raise pytest.UsageError(f"--conformance-label {self.label!r}: letters, digits and . + @ = , [ ] - _ only, up to 100")
        self.env = environment([(t.backend, t.runner) for t in self.targets], self.seed, self.case_dir, self.label,
                               [t.spec for t in self.targets])
        self.finished = self.interrupted = False
        # pytest's cache (-p no:cacheprovider turns it off) keeps the loaded case files between runs
        self.expansions = expansion_cache(config, self.case_dir, self.limits)
        # and the items' models, inputs and the reference's answers at this seed (judge.oracle)
        self.values = self.expansions.values(self.seed) if self.expansions else None
        self.expanded: dict[Path, list[Item]] = {}  # the case files items_of() expanded for the report
        self.fuzz_runs: list[dict] = []  # --conformance-fuzz: each run as results.json keeps it
        if config.getoption("conformance_fuzz") is not None and config.getoption("conformance_fuzz") < 1:
            raise pytest.UsageError("--conformance-fuzz: the budget must be at least 1")
        self._claim_report(config)
        # The bundled cases at the default seed: each derived expectation must be as locked.
        bundled = self.case_dir == bundled_case_dir().resolve() and self.seed == DEFAULT_SEED
        self.lock = Lock(lock_path()) if bundled else None
        self.pending: dict[str, str] = {}  # node id -> its record as JSON, from setup until the call's report

    def _select(self, config: pytest.Config) -> None:
        """Which items run: -k's id part, --conformance-id, the shard, the sample, and the reruns of crashes."""
        self.item_ids: set[str] = set()  # every item the case files produce, selected or not
        keyword = config.getoption("keyword") or ""
        if "@" in keyword:  # pytest's -k grammar has no "@": said before the whole suite is built, not after
            raise pytest.UsageError(f"-k {keyword[:80]!r}: pytest's -k cannot hold '@'; for one backend's item, "
                                    "give --conformance-id 'ID@backend'")
        self.name_part = name_part_of(keyword)
        self.exact_ids = exact_ids(config.getoption("conformance_id"))
        self.shard = shard_of(config.getoption("conformance_shard"))
        self.sample: set[str] | None = None  # --conformance-sample: the covering subset's ids, once computed
        self.rerun_crashes = reruns_of(config.getoption("conformance_rerun_crashes"))

    def _claim_report(self, config: pytest.Config) -> None:
        """The report's directory, claimed and written before the first item: a bad path is a usage
        error, and a run stopped at any moment from here on leaves a report (never an older run's)."""
        report_dir = config.getoption("report")
        self.report_dir: Any = report_dir if not hasattr(config, "workerinput") else None  # a Path, on the controller
        self.directory = None
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

    def mark(self, name: str, meaning: str) -> pytest.Mark:
        """The Mark of this name, registered (for --strict-markers and `pytest --markers`) when first met."""
        if name not in self.marks:
            self.config.addinivalue_line("markers", f"{name}: conformance items: {meaning}")
            self.marks[name] = getattr(pytest.mark, name).mark
        return self.marks[name]

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """The backends' processes start now, so that their imports overlap the collection;
        not where this process runs no item (pytest-xdist's controller, --collect-only)."""
        controller = self.config.getoption("dist", "no") != "no" and not hasattr(self.config, "workerinput")
        if not (controller or self.config.getoption("collectonly")):
            for target in self.targets:
                if isinstance(target.runner, IsolatedBackend):
                    target.runner.start()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.directory is not None:  # with the collection errors
            self.results.checkpoint()
        if (self.config.getoption("lf", False) or self.name_part or self.exact_ids or self.shard or self.sample is not None
                or not self.item_ids):
            return  # --lf collects only the files that failed, -k <id> only its item: every entry would look stale
        for target in self.targets:
            for listing in (target.expectations, target.skips):
                for entry in listing.stale(self.item_ids) if listing else ():
                    self.stale[entry.where] = entry.match
        if hasattr(self.config, "workeroutput"):
            self.config.workeroutput["conformance_stale"] = self.stale

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: absent under -p no:xdist
    def pytest_testnodedown(self, node, error) -> None:
        self.stale.update(getattr(node, "workeroutput", {}).get("conformance_stale", {}))

    def repro(self, item_id: str, spec: str) -> str:
        suite = ["--pyargs", "conformance"] if self.config.option.pyargs else ["conformance"]
        words = ["pytest", *suite, f"--backend={spec}", f"--seed={self.seed}"]
        if self.case_dir != bundled_case_dir().resolve():
            words.append(f"--cases={self.case_dir}")
        if self.config.getoption("expectations") is not None:
            words.append(f"--expectations={self.config.getoption('expectations')}")
        shown = shlex.join(words + ["--conformance-id", item_id])
        adapter = adapter_directory(spec)
        return f"PYTHONPATH={shlex.quote(adapter)} {shown}" if adapter else shown

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.directory is not None and exitstatus != pytest.ExitCode.INTERRUPTED and not self.fuzz_runs:
            self.explain()
        for target in self.targets:
            if target.runner is not target.backend:
                target.runner.close()
        if self.values is not None:
            self.values.save()
        self.finished = True
        if self.directory is not None:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
            try:
                if self.fuzz_runs:
                    from ..fuzz.command import write_fuzz_documents
                    write_fuzz_documents(self.env, self.fuzz_runs, self.report_dir, base=self.results)
                    self.results.close_journal(remove=not interrupted)  # results.json holds what it held
                else:
                    write_reports(self.results, partial=interrupted, interrupted=interrupted, items_of=self.items_of,
                                  values_of=self.script_values)
            except ReportError as e:  # a full disk, say: one line, and the run cannot pass
                self.config.get_terminal_writer().line(f"conformance: {e}", red=True)
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            self.directory.release()

    def explain(self) -> None:
        """The failure lines no defect model names, explained by experiment on the runners their items
        ran on (``explain/lines.py``), within the budget; the records and the document carry it."""
        from ..explain.lines import SHARE_OF_RUN, explain_lines
        from ..scripts.items import ReproError, find_item

        budget = SHARE_OF_RUN * (time.monotonic() - self.started) if self.explain_budget is None else self.explain_budget
        if budget <= 0:
            return

        def find(record: ItemRecord) -> Item | None:
            try:
                return find_item(record["id"], self.case_dir, record.get("file"), self.items_of)
            except ReproError:
                return None

        registry = (self.expansions.registry(self.case_dir, self.limits) if self.expansions
                    else load_registry(self.case_dir, self.limits))
        # Probes run in a child process, whatever --isolation says: a probe may crash or hang where
        # no item did, and here, in the controller, that would cost the whole run's report.
        runners = {t.backend.name: t.runner if isinstance(t.runner, IsolatedBackend) else IsolatedBackend(
            t.spec, t.backend.name, t.backend.version, self.config.getoption("conformance_timeout"),
            self.config.getoption("conformance_memory_limit") or None) for t in self.targets}
        try:
            done = explain_lines(self.results.records, runners, find, registry, self.seed, budget)
        finally:
            for target in self.targets:
                if runners[target.backend.name] is not target.runner:
                    runners[target.backend.name].close()
        self.results.explanations = done.explanations
        if done.explanations or done.left:
            left = f"; {done.left} left, the budget ({budget:.0f} s) spent" if done.left else ""
            self.config.get_terminal_writer().line(
                f"conformance: {len(done.explanations)} failure line(s) explained by experiment ({done.probes} probe "
                f"models, {done.seconds:.1f} s){left}")

    def items_of(self, file: Path) -> list[Item]:
        """A case file's items, through the expansion cache where there is one, each file once
        (the report's repro scripts ask for several items of the same files)."""
        if file not in self.expanded:
            if self.expansions is None:
                self.expanded[file] = expand_file(file, load_registry(self.case_dir, self.limits), self.limits)
            else:
                registry = self.expansions.registry(self.case_dir, self.limits)
                self.expanded[file] = self.expansions.items(file, registry, self.limits)
        return self.expanded[file]

    def script_values(self, item: Item) -> ScriptValues:
        """What the report's repro script of ``item`` shows: the oracle's values, as this run
        (or an earlier one) kept them."""
        registry = (self.expansions.registry(self.case_dir, self.limits) if self.expansions
                    else load_registry(self.case_dir, self.limits))
        return script_values(item, self.seed, registry, self.values)

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

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.results.add_collection_error(report.nodeid, str(report.longrepr))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "setup" and not report.failed:  # kept as sent: read only if its worker is lost
            text = dict(getattr(report, "user_properties", ())).get(RECORD)
            if text:
                self.pending[report.nodeid] = text
            return
        record = report_record(report) if report.when != "teardown" else None
        if record is None:  # not one of the suite's items, or the report of a lost worker (recorded below)
            return
        record = record.copy()  # the report's own is read again by other hooks
        if report.when == "call":
            self.pending.pop(report.nodeid, None)
            record["duration_s"] = round(report.duration, 6)
        else:
            record["outcome"], record["message"] = Outcome.ERROR.value, (
                str(report.longrepr).strip().splitlines()[-1] if report.longrepr else "setup failed")
        self.results.add(record)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched) -> None:
        """pytest-xdist lost the worker running ``crashitem`` (SIGKILL, the OOM killer, a crash
        with --isolation=none): the item is a ``crash``, whether or not its setup had reported."""
        pending = self.pending.pop(crashitem, None)
        record = json.loads(pending) if pending else self._record_of(crashitem)
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "?")
        message = (f"the pytest-xdist worker {worker!r} running this item died (killed, or its process crashed); "
                   "no answer was judged")
        if record is not None:
            record["outcome"], record["message"] = Outcome.CRASH.value, message
            self.results.add(record)
        else:  # not an item of the suite's (a fuzz test): still never lost
            self.results.add_collection_error(crashitem, message)

    def _record_of(self, node_id: str) -> ItemRecord | None:
        """An item's record from its node id alone: the controller of an xdist run collects
        nothing, and a worker killed during setup has sent nothing."""
        *parents, name = node_id.split("::")
        item_id, _, spec = name.partition("@")
        target = next((t for t in self.targets if t.spec == spec), None) if spec else self.targets[0]
        files = case_files(self.case_dir)
        named = [f for f in files if parents and f.name == parents[-1]]  # ids are unique: any file would do
        try:
            items = [i for file in named or files for i in self.items_of(file)]
        except CaseError:
            return None
        item = next((i for i in items if i.id == item_id), None)
        if item is None or target is None:
            return None
        record = item_record(item, self.case_dir)
        record["backend"], record["backend_version"] = target.backend.name, target.backend.version
        if self.label:
            record["label"] = self.label
        return record


def report_record(report) -> ItemRecord | None:
    """The record a suite item's report carries (in its user properties), or None; read once
    per report, however many hooks ask."""
    if report not in _RECORDS:  # kept beside the report, not in it: a worker sends its reports on
        text = dict(getattr(report, "user_properties", ())).get(RECORD)
        _RECORDS[report] = json.loads(text) if text else None
    return _RECORDS[report]


_RECORDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


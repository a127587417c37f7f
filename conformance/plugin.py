"""The pytest plugin: ``pytest conformance --backend=NAME`` collects the case files as items.

Each item's report location is its case's YAML line; its failure text is the diff and ends
with a command that reruns it. Outcomes appear under their own names in pytest's summary:
``divergent`` items pass, ``unsupported`` ones are skipped, ``fail`` and ``error`` fail.
"""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path

import pytest

from .backends import BackendNotFound, load_backend
from .backends.isolated import IsolatedBackend
from .cases import CaseError, bundled_case_dir, case_files, load_case_file, load_registry
from .compare import Outcome, SuiteError, Verdict, evaluate
from .expand import Item, expand
from .report import RESULTS_FILE, Results, environment, header_lines, item_record

PACKAGE_DIR = Path(__file__).resolve().parent
RECORD = "conformance"
STATE = pytest.StashKey["SuiteSession"]()
DEFAULT_SEED = 0
# (category, progress letter, verbose word) for pytest's summary
STATUS = {
    Outcome.PASS: ("passed", ".", "PASSED"),
    Outcome.DIVERGENT: ("divergent", "d", "DIVERGENT"),
    Outcome.UNSUPPORTED: ("unsupported", "u", "UNSUPPORTED"),
    Outcome.FAIL: ("failed", "F", "FAILED"),
    Outcome.ERROR: ("error", "E", "ERROR"),
    Outcome.CRASH: ("crash", "C", "CRASH"),
    Outcome.TIMEOUT: ("timeout", "T", "TIMEOUT"),
}
DEFAULT_TIMEOUT_S = 60
DEFAULT_MEMORY_LIMIT_MIB = 8192


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "ONNX max-pooling conformance suite")
    group.addoption("--backend", default="reference",
                    help="backend under test: a name registered in the conformance.backends entry-point "
                         "group (reference, ort) or package.module:ClassName (default: reference)")
    group.addoption("--cases", type=Path, default=None,
                    help="run the case files in this directory instead of the bundled ones")
    group.addoption("--report", type=Path, default=None, help="write DIR/results.json")
    group.addoption("--seed", type=int, default=DEFAULT_SEED,
                    help=f"seed of the random inputs (default {DEFAULT_SEED})")
    group.addoption("--isolation", choices=("process", "none"), default="process",
                    help="run the backend in a child process, so that a crash or hang costs one item "
                         "(default), or in the test process")
    group.addoption("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help=f"seconds an isolated backend may take per item (default {DEFAULT_TIMEOUT_S})")
    group.addoption("--memory-limit", type=int, default=DEFAULT_MEMORY_LIMIT_MIB, metavar="MIB",
                    help=f"address-space limit of the isolated backend's process, 0 for none "
                         f"(default {DEFAULT_MEMORY_LIMIT_MIB})")


class SuiteSession:
    """The run's backend, seed and results; its hooks act only when the suite is requested."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.spec = config.getoption("backend")
        try:
            self.backend = load_backend(self.spec)
        except (BackendNotFound, ImportError) as e:
            raise pytest.UsageError(f"--backend={self.spec}: {e}") from None
        self.runner = self.backend
        if config.getoption("isolation") == "process":
            self.runner = IsolatedBackend(self.spec, self.backend.name, self.backend.version,
                                          config.getoption("timeout"), config.getoption("memory_limit") or None)
        self.seed = config.getoption("seed")
        self.case_dir = (config.getoption("cases") or bundled_case_dir()).resolve()
        if not self.case_dir.is_dir():
            raise pytest.UsageError(f"--cases {self.case_dir}: not a directory")
        self.report_dir = config.getoption("report")
        self.env = environment(self.backend, self.seed, self.case_dir)
        if self.runner is not self.backend:
            self.env["backend_details"].update(self.runner.details())
        writes = self.report_dir is not None and not hasattr(config, "workerinput")
        self.results = Results(self.env, self.report_dir if writes else None)

    def repro(self, item_id: str) -> str:
        words = ["pytest", "conformance", f"--backend={self.spec}", f"--seed={self.seed}"]
        if self.case_dir != bundled_case_dir().resolve():
            words.append(f"--cases={self.case_dir}")
        return shlex.join(words + ["-k", item_id])

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        if self.runner is not self.backend:
            self.runner.close()
        if self.results.directory is not None:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
            self.results.write(partial=interrupted, interrupted=interrupted)

    def pytest_report_header(self) -> list[str]:
        return header_lines(self.env)

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        if file_path == PACKAGE_DIR / "__init__.py":
            return Suite.from_parent(parent, path=self.case_dir)
        return None

    def pytest_report_teststatus(self, report: pytest.TestReport):
        record = dict(getattr(report, "user_properties", ())).get(RECORD)
        if report.when == "call" and record and "outcome" in record:
            return STATUS[Outcome(record["outcome"])]
        return None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.results.add_collection_error(report.nodeid, str(report.longrepr))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = dict(report.user_properties).get(RECORD)
        if record is None:
            if report.failed and "worker" in str(report.longrepr) and "crashed" in str(report.longrepr):
                # pytest-xdist lost the worker process running this item (--isolation=none)
                item_id = report.nodeid.rpartition("::")[2]
                op, _, version = item_id.split("/")[0].rpartition("-")
                self.results.add({"id": item_id, "op": op, "version": int(version), "outcome": Outcome.CRASH.value,
                                  "message": str(report.longrepr).strip().splitlines()[-1]})
            return
        if report.when == "call":
            self.results.add(dict(record, duration_s=round(report.duration, 6)))
        elif report.when == "setup" and report.failed:
            message = str(report.longrepr).strip().splitlines()[-1] if report.longrepr else "setup failed"
            self.results.add(dict(record, outcome=Outcome.ERROR.value, message=message))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        records = self.results.records
        if not records:
            return
        table = Counter((r["op"], r["version"], r["outcome"]) for r in records)
        outcomes = [o.value for o in Outcome if any(k[2] == o.value for k in table)]
        terminalreporter.section("conformance: items per op version")
        terminalreporter.write_line(f"{'op-version':<24}" + "".join(f"{o:>13}" for o in outcomes) + f"{'total':>8}")
        for op, version in sorted({(k[0], k[1]) for k in table}):
            counts = [table[op, version, o] for o in outcomes]
            terminalreporter.write_line(f"{op + '-' + str(version):<24}" + "".join(f"{c:>13}" for c in counts)
                                        + f"{sum(counts):>8}")
        if self.results.directory is not None:
            terminalreporter.write_line(f"conformance report: {self.results.directory / RESULTS_FILE}")


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


class Suite(CaseErrorsInOneLine, pytest.Directory):
    """The case directory: one collector per case file."""

    def collect(self):
        state = self.config.stash[STATE]
        self.registry = load_registry(state.case_dir)
        self.seen: dict[str, Path] = {}
        for file in case_files(state.case_dir):
            yield CaseFile.from_parent(self, path=file)


class CaseFile(CaseErrorsInOneLine, pytest.File):
    def collect(self):
        suite: Suite = self.parent
        for case in load_case_file(self.path, suite.registry):
            for item in expand(case):
                if item.id in suite.seen:
                    raise case.error((), f"item id {item.id} is also produced by {suite.seen[item.id]}")
                suite.seen[item.id] = self.path
                yield ConformanceItem.from_parent(self, name=item.id, item=item)


class ConformanceFailure(Exception):
    def __init__(self, verdict: Verdict):
        self.verdict = verdict


class ConformanceItem(pytest.Item):
    def __init__(self, *, item: Item, **kwargs):
        super().__init__(**kwargs)
        self.item = item
        self.record = item_record(item, self.config.stash[STATE].case_dir)
        self.user_properties.append((RECORD, self.record))

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        self.record.update(backend=state.backend.name, backend_version=state.backend.version)
        try:
            verdict = evaluate(self.item, state.runner, state.seed, self.parent.parent.registry)
        except (CaseError, SuiteError) as e:
            self.record.update(outcome=Outcome.ERROR.value, message=f"suite error: {e}")
            raise
        self.record.update(outcome=verdict.outcome.value, message=verdict.message, ambiguity=verdict.ambiguities)
        if verdict.outcome is Outcome.UNSUPPORTED:
            pytest.skip(f"unsupported: {verdict.message}")
        if verdict.outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT):
            raise ConformanceFailure(verdict)

    def repr_failure(self, excinfo):
        state = self.config.stash[STATE]
        if isinstance(excinfo.value, ConformanceFailure):
            verdict = excinfo.value.verdict
            body = verdict.details or verdict.message
        elif isinstance(excinfo.value, (CaseError, SuiteError)):
            body = f"suite error: {excinfo.value}"
        else:
            return super().repr_failure(excinfo)
        case = self.item.case
        return "\n".join([
            f"{self.item.id}: {case.description}",
            f"case: {case.file}:{case.line} ({_provenance(case.provenance)})",
            f"attributes: {case.attributes}",
            "inputs: " + ", ".join(f"{i.name} {i.dtype.name}{list(i.shape)}" for i in self.item.inputs),
            f"expected: {self.item.expectation}",
            "",
            body,
            "",
            f"repro: {state.repro(self.item.id)}",
        ])

    def reportinfo(self):
        return self.item.case.file, self.item.case.line - 1, self.item.id


def _provenance(provenance: dict) -> str:
    if "generated" in provenance:
        return "generated: " + " ".join(provenance["generated"].split())
    return f"{provenance['document']}: {provenance['example']}"

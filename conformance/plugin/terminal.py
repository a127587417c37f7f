"""What the terminal shows: the header lines, each item's outcome under its own name (letter and
word), and the table of outcomes per operator version (and backend) at the end."""

from __future__ import annotations

from collections import Counter

import pytest

from ..judge.expectations import Expectations, file_names
from ..outcomes import Outcome
from ..report.results import cannot_run_lines, refused_whole
from ..report.causes import failed_twin_lines, undiagnosed_line
from ..report.writer import header_lines
from .junit import count_errors_apart
from .session import SuiteSession, report_record

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


class TerminalTable:
    """The suite's lines in pytest's terminal output."""

    def __init__(self, session: SuiteSession):
        self.session = session
        self.refusals_said: set[tuple[str, str]] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """At a backend's first unsupported item of a domain, one line: the "u"s that follow are a
        declared refusal of the item's valid twin, not a hang (pip's ONNX Runtime prints 3,833 of
        them for com.ms.internal.nhwc). On the process that prints the progress alone."""
        record = report_record(report) if report.when == "call" else None
        if not record or record.get("outcome") != Outcome.UNSUPPORTED.value or hasattr(self.session.config, "workerinput"):
            return
        key = (record["backend"], record.get("domain", "ai.onnx"))
        reporter = self.session.config.pluginmanager.get_plugin("terminalreporter")
        if key in self.refusals_said or reporter is None or self.session.config.option.verbose > 0:
            return  # verbose: each item's line says unsupported already
        self.refusals_said.add(key)
        reporter.write_line("")  # off the progress letters' line
        twin = " nor its valid twin" if record.get("control") else ""  # a refusal counts only beside its control
        reporter.write_line(f"conformance: {key[0]} declares it cannot run {record['id']}{twin}: each 'u' "
                            f"of {key[1]} is a declared refusal, not a hang (the end of the run counts them)")

    def expectation_lines(self) -> list[str]:
        """Which files of --expectations each backend reads, and how many entries apply."""
        path = self.session.config.getoption("expectations")
        lines = []
        for target in self.session.targets:
            names = file_names(target.backend.name, target.spec.partition("[")[0])
            found = [f"{e.file} ({len(e.entries)} {'entry' if len(e.entries) == 1 else 'entries'})"
                     for e in (target.expectations, target.skips) if e]
            looked = (f"{path}/{names[0]}.yaml" if path.is_dir() else str(path))
            lines.append(f"conformance expectations of {target.spec}: " + (", ".join(found) or f"none ({looked} not found)"))
        return lines

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        count_errors_apart(session.config)

    def pytest_report_header(self) -> list[str]:
        extra = self.expectation_lines() if self.session.config.getoption("expectations") is not None else []
        if self.session.lock is not None and self.session.lock.problem is not None:  # every derived item will say so too
            extra.append(f"conformance WARNING: the derived expectations cannot be checked: {self.session.lock.problem}")
        return header_lines(self.session.env) + extra

    def pytest_report_teststatus(self, report: pytest.TestReport):
        record = report_record(report) if report.when == "call" else None
        if record and "outcome" in record:
            return STATUS[Outcome(record["outcome"])]
        return None

    @pytest.hookimpl(specname="pytest_terminal_summary", wrapper=True, tryfirst=True)
    def pytest_terminal_summary_before_pytest(self, terminalreporter):  # pytest takes hooks only from pytest_* names
        """Before pytest's summaries: its passed setup and teardown reports without captured
        output leave pytest's list of them. For each failure (or pass, under -rP) pytest scans
        that whole list for the item's teardown output (TerminalReporter._get_teardown_reports),
        which is quadratic: about a second at the end of a run with 654 failures and errors among
        10,763 items. A report without sections has no output to print, so nothing shown changes."""
        unshown = terminalreporter.stats.get("")
        if unshown:
            unshown[:] = [report for report in unshown
                          if not (getattr(report, "when", None) in ("setup", "teardown") and not report.sections)]
        return (yield)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        records = self.session.results.records
        if self.session.stale:
            terminalreporter.section("conformance: stale expectations (they match no item)")
            for where, match in sorted(self.session.stale.items()):
                terminalreporter.write_line(f"{where}: {match}")
        unsupported = Expectations.unsupported_entries(records)
        if unsupported:
            terminalreporter.section("conformance: stale expectations (every item they list is unsupported: the "
                                     "backend cannot run it at all)")
            for where, match in sorted(unsupported.items()):
                terminalreporter.write_line(f"{where}: {match}")
        if not records:
            return
        several = len(self.session.targets) > 1
        table = Counter((r["op"], r["version"], r["backend"], r["outcome"]) for r in records)
        outcomes = [o.value for o in Outcome if any(k[3] == o.value for k in table)]
        terminalreporter.section("conformance: items per op version" + (" and backend" if several else ""))
        label = "op-version@backend" if several else "op-version"
        terminalreporter.write_line(f"{label:<30}" + "".join(f"{o:>12}" for o in outcomes) + f"{'total':>8}")
        for op, version, backend in sorted({k[:3] for k in table}):
            counts = [table[op, version, backend, o] for o in outcomes]
            row = f"{op}-{version}" + (f"@{backend}" if several else "")
            terminalreporter.write_line(f"{row:<30}" + "".join(f"{c:>12}" for c in counts) + f"{sum(counts):>8}")
        refused = cannot_run_lines(records)
        if refused:  # learnt from the valid twins: what makes the unsupported items unsupported
            terminalreporter.section("conformance: what the backend cannot run at all (the valid twins it declared "
                                     "it cannot run)")
            for line in refused:
                terminalreporter.write_line(line)
        for line in refused_whole({"environment": self.session.env, "items": records}):
            terminalreporter.write_line(f"conformance: {line}")
        cut = undiagnosed_line(records)
        if cut:
            terminalreporter.write_line(f"conformance: {cut}")
        failed = failed_twin_lines(records)
        if failed:  # a twin that crashed, hung or raised undeclared: a bug on a valid model, never unsupported
            terminalreporter.section("conformance: minimal valid models the backend fails (no declared refusal)")
            for line in failed:
                terminalreporter.write_line(line)
        if self.session.report_dir is not None:
            terminalreporter.write_line(f"conformance report: {self.session.report_dir}/ (results.json, report.html, summary.md)")


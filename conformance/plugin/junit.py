"""JUnit XML counts what the terminal counts: an item that errs, crashes or times out is an
``<error>``, not a ``<failure>``. pytest's junitxml writes ``<error>`` only for a failed setup or
teardown, so a CI dashboard read "38 failures, 0 errors" where the terminal said "35 failed, 3
error". Here ``failures`` holds the fail and xpass items, ``errors`` the error, crash and timeout
items (each testcase's message names its outcome), ``skipped`` the unsupported and skipped ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..outcomes import Outcome
from .session import report_record

ERRORS = {Outcome.ERROR.value, Outcome.CRASH.value, Outcome.TIMEOUT.value}


def count_errors_apart(config: pytest.Config) -> None:
    """Where ``--junitxml`` writes a file (on the controller only, under xdist): the testcases of
    error, crash and timeout items written as ``<error>``. pytest keeps no public hook for this: its
    writer's testcase is reached by the two names below, and where a release lacks them the XML
    stays pytest's own (tests/test_vendor_experience.py checks the counts on today's pytest)."""
    from _pytest.junitxml import xml_key  # noqa: PLC2701 - the stash key of pytest's own writer

    log = config.stash.get(xml_key, None)
    opened = getattr(log, "_opentestcase", None)
    if log is None or opened is None:
        return

    def testcase(report: Any) -> Any:
        reporter = opened(report)
        record = report_record(report) if getattr(report, "when", None) == "call" else None
        if record and record.get("outcome") in ERRORS and hasattr(reporter, "_add_simple"):
            def as_error(failed: Any) -> None:
                message = f"{record['outcome']}: {str(record.get('message', ''))[:500]}"
                reporter._add_simple("error", message, str(failed.longrepr))
            reporter.append_failure = as_error  # this testcase's alone
        return reporter

    log._opentestcase = testcase  # type: ignore[method-assign]  # this writer's alone

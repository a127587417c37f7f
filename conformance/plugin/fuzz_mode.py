"""``--conformance-fuzz BUDGET``: the fuzz items in place of the case files, and each fuzz run
(which a pytest-xdist worker's report carries) kept for the run's documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..report.writer import FUZZ_RUN
from .session import PACKAGE_DIR, SuiteSession


class FuzzMode:
    def __init__(self, session: SuiteSession):
        self.session = session

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        if file_path == PACKAGE_DIR / "__init__.py":
            from ..fuzz.pytest_items import FuzzSuite
            return FuzzSuite.from_parent(parent, path=self.session.case_dir, session_state=self.session)
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        fuzz_run = dict(getattr(report, "user_properties", ())).get(FUZZ_RUN)
        if fuzz_run is not None and report.when == "call":
            self.session.fuzz_runs.append(json.loads(fuzz_run))

"""The pytest plugin: ``pytest conformance --backend=NAME`` collects the case files as items.

Each item's report location is its case's YAML line; its failure text is the diff and ends
with a command that reruns it. Outcomes appear under their own names in pytest's summary:
``divergent`` and ``xfail`` items pass, ``unsupported`` ones are skipped; ``fail``, ``error``,
``crash``, ``timeout`` and ``xpass`` fail. With several backends (``--backend=reference,ort``)
every item runs on each, and its id ends in ``@backend``.

This module holds the hooks pytest finds through the suite's pytest11 entry point
(``conformance.pytest_entry``): the options, and the suite's plugins registered when the suite is
requested. ``session`` keeps the run's state, ``collection`` turns case files into items,
``terminal`` writes the table and ``fuzz_mode`` swaps the items for fuzzing (``--conformance-fuzz``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .collection import CaseCollection
from .fuzz_mode import FuzzMode
from .options import pytest_addoption
from .session import PACKAGE_DIR, STATE, SuiteSession
from .terminal import TerminalTable

__all__ = ["PACKAGE_DIR", "pytest_addoption", "pytest_configure"]


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
        collect = FuzzMode(session) if config.getoption("conformance_fuzz") is not None else CaseCollection(session)
        config.pluginmanager.register(collect, "conformance-collection")
        config.pluginmanager.register(TerminalTable(session), "conformance-terminal")

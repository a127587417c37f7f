"""`pytest conformance --backend=NAME --conformance-fuzz=BUDGET`: the fuzz as one test per backend,
instead of the case files. A test fails when the fuzz finds a failure cluster; its report lists
the clusters, and --conformance-fuzz-out writes their cases and repro scripts."""

from __future__ import annotations

import json
import shlex

import pytest

from .command import NOTHING_JUDGED, fuzz, summary
from ..report.writer import FUZZ_RUN, numpy_scalars
from .output import run_document, write_cases, write_repros
from .runner import FuzzRunner
from .space import all_targets
from ..backends.isolated import IsolatedBackend


class FuzzFailure(Exception):
    pass


class FuzzSuite(pytest.Directory):
    """One fuzz test per backend under test."""

    def __init__(self, *, session_state, **kwargs):
        super().__init__(**kwargs)
        self.state = session_state

    def collect(self):
        for target in self.state.targets:
            yield FuzzItem.from_parent(self, name=f"fuzz@{target.spec}", target=target)


class FuzzItem(pytest.Item):
    def __init__(self, *, target, **kwargs):
        super().__init__(**kwargs)
        self.target = target

    def runtest(self) -> None:
        state = self.parent.state  # type: ignore[union-attr]  # a FuzzSuite's child: its parent holds the state
        budget = self.config.getoption("conformance_fuzz")
        runner = self.target.runner
        if isinstance(runner, IsolatedBackend):  # the fuzz's own, with the same limits (see runner.py)
            runner = FuzzRunner.like(runner)
        try:
            run = fuzz(runner, all_targets(), state.seed, budget)
        finally:
            if runner is not self.target.runner:
                runner.close()
        out = self.config.getoption("conformance_fuzz_out")
        out = out / self.target.spec if out is not None else None
        if out is not None:
            write_cases(run, out)
            write_repros(run, out)
        # On a pytest-xdist worker the run is here only: its report carries it to the controller.
        self.user_properties.append((FUZZ_RUN, json.dumps(run_document(run, out), default=numpy_scalars)))
        self.user_properties.append(("conformance-fuzz", summary(run)))
        if run.clusters:
            raise FuzzFailure(summary(run))
        if run.judged == 0:
            pytest.skip(f"conformance fuzz: {NOTHING_JUDGED}")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, FuzzFailure):
            budget = self.config.getoption("conformance_fuzz")
            repro = shlex.join(["conformance", "fuzz", f"--backend={self.target.spec}", f"--budget={budget}",
                                f"--seed={self.parent.state.seed}", "--out=fuzz-out"])
            return f"{excinfo.value}\n\nrepro (writes each cluster's case and script): {repro}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, self.name

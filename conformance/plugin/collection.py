"""Collection: the case directory as a pytest Directory, each case file as a File, each item
(on each backend under test) as a ConformanceItem whose failure text is the diff and a repro."""

from __future__ import annotations

import dataclasses
import json
from functools import cached_property
from pathlib import Path

import pytest

from ..expand.cache import expand_file
from ..expand.items import Item
from ..judge.verdict import SuiteError, Verdict, evaluate
from ..load.cases import REGISTRY_FILE, CaseError, bundled_case_dir, case_files, escaped, load_registry
from ..outcomes import FAILING, Outcome
from ..docgen.coverage import covering_sample
from ..scripts.items import command as repro_command
from ..report.record import ItemRecord, item_record, with_verdict
from .session import PACKAGE_DIR, RECORD, STATE, BackendUnderTest, SuiteSession, in_shard


class CaseCollection:
    """Collects the case directory where pytest meets the package's ``__init__.py``."""

    def __init__(self, session: SuiteSession):
        self.session = session

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        if file_path == PACKAGE_DIR / "__init__.py":
            return Suite.from_parent(parent, path=self.session.case_dir)
        return None


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
        if self.config.getoption("conformance_sample"):  # the subset is chosen over every file's items
            expanded = state.expansions.items if state.expansions else expand_file
            state.sample = covering_sample([item for file in case_files(state.case_dir)
                                            for item in expanded(file, self.registry, state.limits)])
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
        names = [""] if len(targets) == 1 else [f"@{target.spec}" for target in targets]
        part, exact = state.name_part, state.exact_ids
        if (part or exact) and state.expansions:  # -k <id>, --conformance-id: a file without the item is not expanded
            ids = state.expansions.ids(self.path, suite.registry, state.limits)
            if not any(_named(i, names, part, exact) for i in ids):
                return
        if state.expansions is None:
            expanded = expand_file(self.path, suite.registry, state.limits)
        else:
            wanted = (lambda i: _named(i, names, part, exact)) if part or exact else None
            expanded = state.expansions.items(self.path, suite.registry, state.limits, wanted)
        for item in expanded:
            if item.id in suite.seen:
                raise item.case.error((), f"item id {item.id} is also produced by {suite.seen[item.id]}")
            suite.seen[item.id] = self.path
            state.item_ids.add(item.id)
            for target, suffix in zip(targets, names):
                name = item.id + suffix
                if part and part not in name.lower():
                    continue
                if exact and item.id not in exact and name not in exact:
                    continue
                if not in_shard(item.id, state.shard) or (state.sample is not None and item.id not in state.sample):
                    continue
                # The id given whole: pytest >= 9 would otherwise read "[float32]" as parameters
                # on the cache's side only, and --lf/--ff would find no previous failure.
                yield ConformanceItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", item=item,
                                                  target=target)


def _named(item_id: str, names: list[str], part: str | None, exact) -> bool:
    """The item is one that ``-k <id>`` (``part``) and ``--conformance-id`` (``exact``) ask for,
    under one of its backends' ``names``."""
    return any((not exact or item_id in exact or f"{item_id}{n}" in exact)
               and (not part or part in f"{item_id}{n}".lower()) for n in names)


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
    def record(self) -> ItemRecord:
        """Built when the item runs: a run selecting one item with -k builds one."""
        record = item_record(self.item, self.config.stash[STATE].case_dir)
        record["backend"], record["backend_version"] = self.target.backend.name, self.target.backend.version
        label = self.config.stash[STATE].label
        if label:
            record["label"] = label
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
            self.record.update({"outcome": Outcome.SKIPPED.value, "message": f"{skip.reason} ({skip.where})",
                                "expectation": skip.as_json()})
            pytest.skip(f"skipped: {skip.reason} ({skip.where})")
        try:
            verdict = self._evaluate()
            if verdict.outcome is Outcome.CRASH and state.rerun_crashes:
                verdict = self._rerun_crash(verdict, state.rerun_crashes)
        except Exception as e:  # the suite's own fault, not the backend's: shown in full, and the run fails
            self.record.update({"outcome": Outcome.ERROR.value, "message": f"suite error: {type(e).__name__}: {e}",
                                "suite_error": True})
            raise
        if self.target.expectations is not None:
            verdict, known = self.target.expectations.apply(self.item.id, verdict)
            if known is not None:
                self.record["expectation"] = known.as_json()
        with_verdict(self.record, verdict)
        if verdict.outcome is not Outcome.PASS:
            self.record["repro"] = state.repro(self.item.id, self.target.spec)
            self.record["script"] = repro_command(self.item.id, self.target.spec, state.seed, state.case_dir)
            if "twin" in self.record:  # its line is the minimal valid model's: that model's own script
                self.record["twin"]["script"] = f"{self.record['script']} --twin"
        if verdict.outcome is Outcome.UNSUPPORTED:
            pytest.skip(f"unsupported: {verdict.message}")
        if verdict.outcome in FAILING:
            raise ConformanceFailure(verdict)

    def _evaluate(self) -> Verdict:
        state = self.config.stash[STATE]
        return evaluate(self.item, self.target.runner, state.seed, self.parent.parent.registry,  # type: ignore[union-attr]  # Suite > CaseFile > item
                        state.lock, state.values)

    def _rerun_crash(self, crashed: Verdict, times: int) -> Verdict:
        """A crash, run again (the runner starts a fresh process after one) up to ``times`` more
        times, stopping at the first run that does not crash: a crash all the same, with how many
        of the runs crashed, so that a load-dependent abort is told from one every run meets."""
        runs, crashes = 1, 1
        for _ in range(times):
            again = self._evaluate()
            runs += 1
            if again.outcome is not Outcome.CRASH:
                break
            crashes += 1
        if crashes == runs:
            return dataclasses.replace(crashed, message=f"{crashed.message} (in each of {runs} runs)")
        return dataclasses.replace(crashed, message=f"{crashed.message} (in {crashes} of {runs} runs: not deterministic)",
                                   flaky=True)

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

"""Known failures of a backend, kept in files outside the cases (e.g. expectations/ort.yaml).

A listed item that fails as listed becomes `xfail`; a listed item that passes becomes `xpass`,
which fails the run, so that the list stays true (unless the entry says ``flaky: true``: it fails
so in some runs only, a load-dependent crash, say). A listed item that the backend cannot run at
all (`unsupported`) stays so, and an entry every item of which is unsupported is reported stale,
as one that matches no item is. A listed item that goes wrong in another way
keeps its own outcome, with the listing named in its message.

An entry may name a cause instead of, or beside, its ids: ``diagnosis`` (a defect model, a family of
them, or a pair ``a+b``). It takes an item its glob reaches (every item, without ``match``) whose
failure that cause reproduces exactly, with the listed outcome, and that no entry lists by id: a
known cause on an item not listed, where which items a bug reaches depends on the machine (which
shapes ONNX Runtime's vector kernels take varies with the CPU). An item that fails in another way
still fails. Such an entry is never stale by its ids.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping


from ..load.cases import read_yaml
from ..outcomes import Outcome
from .analysis.catalogue import BY_NAME
from .diagnoses import SEPARATOR
from .verdict import Verdict


@dataclass(frozen=True)
class Expectation:
    match: str  # a glob over item ids, e.g. "MaxPool-*/pads_beyond_kernel/*"
    outcome: Outcome
    reason: str
    link: str | None
    where: str  # file:line of the entry
    flaky: bool = False  # fails so in some runs only: a pass is no xpass
    cause: str | None = None  # the root cause it is one of: entries of one cause share the name
    diagnosis: str | None = None  # the cause that must reproduce an item's failure for the entry to take it

    def as_json(self) -> dict[str, str | None]:
        cause = {"cause": self.cause} if self.cause else {}
        diagnosis = {"diagnosis": self.diagnosis} if self.diagnosis else {}
        return {"match": self.match, "outcome": self.outcome.value, "reason": self.reason,
                "link": self.link, "where": self.where, **cause, **diagnosis}

    def explains(self, verdict: Verdict) -> bool:
        """Whether the verdict is a failure this entry's cause reproduces exactly: one of its
        diagnoses (readings of open questions aside) is the cause, holds it among its pair, or is
        a model of the family it names."""
        if self.diagnosis is None or verdict.outcome is not self.outcome:
            return False
        wanted = set(self.diagnosis.split(SEPARATOR))  # the file's own spelling of a cause
        for found in verdict.diagnosis:
            models = [m.plain for m in found.models]
            named = set(models) | {BY_NAME[m].family for m in models if m in BY_NAME and BY_NAME[m].family}
            if wanted <= named:
                return True
        return False


class Expectations:
    """The entries of one file (``file``) that apply to the backend under test."""

    def __init__(self, entries: list[Expectation], file: Path | None = None):
        self.entries, self.file = entries, file

    def find(self, item_id: str, verdict: Verdict | None = None) -> Expectation | None:
        """The first entry that lists the item by id; else, given its verdict, the first that
        names a cause reproducing its failure (``Expectation.explains``)."""
        listed = next((e for e in self.entries if e.diagnosis is None and fnmatch.fnmatchcase(item_id, e.match)), None)
        if listed is not None or verdict is None:
            return listed
        return next((e for e in self.entries if e.diagnosis is not None and fnmatch.fnmatchcase(item_id, e.match)
                     and e.explains(verdict)), None)

    def stale(self, item_ids: Iterable[str]) -> list[Expectation]:
        """The entries that match none of ``item_ids``: left behind by a renamed or removed case.
        An entry by cause is none of them: the items it takes are the machine's to decide."""
        waiting = {e: re.compile(fnmatch.translate(e.match)).match for e in self.entries if e.diagnosis is None}
        for item_id in item_ids:
            for entry in [e for e, match in waiting.items() if match(item_id)]:
                del waiting[entry]
            if not waiting:
                break
        return list(waiting)

    @staticmethod
    def unsupported_entries(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """``where`` -> match of the entries every item of which the run found unsupported (from
        the records' ``expectation``): the backend cannot run what they list, so they list nothing."""
        outcomes: dict[tuple[str, str], set[str]] = {}
        for record in records:
            listed = record.get("expectation")
            if listed and "where" in listed:
                outcomes.setdefault((listed["where"], listed["match"]), set()).add(record["outcome"])
        return {where: match for (where, match), seen in outcomes.items() if seen == {Outcome.UNSUPPORTED.value}}

    def apply(self, item_id: str, verdict: Verdict) -> tuple[Verdict, Expectation | None]:
        known = self.find(item_id, verdict)
        if known is None or verdict.outcome is Outcome.DIVERGENT:
            return verdict, None
        if known.diagnosis is not None:  # taken by its cause, which reproduces this failure exactly
            return dataclasses.replace(verdict, outcome=Outcome.XFAIL, message=f"{verdict.message} [known cause "
                                       f"{known.diagnosis} ({known.where}), on an item no entry lists: {known.reason}]"), known
        if verdict.outcome is Outcome.UNSUPPORTED:  # it runs no more: an entry all of whose items are so is stale
            return dataclasses.replace(verdict, message=f"{verdict.message} (listed as a known {known.outcome.value} "
                                                        f"at {known.where})"), known
        if verdict.outcome is Outcome.PASS and known.flaky:  # listed as failing in some runs: this one did not
            return dataclasses.replace(verdict, message=f"passed this time (listed as a flaky {known.outcome.value} at "
                                                        f"{known.where})"), known
        if verdict.outcome is Outcome.PASS:
            message = f"listed as a known {known.outcome.value} ({known.reason}) but passes: update {known.where}"
            return dataclasses.replace(verdict, outcome=Outcome.XPASS, message=message), known
        if verdict.outcome is known.outcome:
            return dataclasses.replace(verdict, outcome=Outcome.XFAIL, message=f"{verdict.message} [known: {known.reason}]"), known
        message = f"{verdict.message} (listed as a known {known.outcome.value} at {known.where})"
        return dataclasses.replace(verdict, message=message), known


SKIPS_SUFFIX = ".skips.yaml"


def file_names(backend: str, fallback: str | None = None) -> list[str]:
    """The names a backend's files go by: its name, then the name it was given without options
    (``ort[threads=1]`` shares the list of ``ort``); an import path ``package.module:Class`` goes
    by its class's name (``Class.yaml``), since a file name cannot hold the path."""
    names: list[str] = []
    for name in (backend, fallback):
        name = (name or "").rpartition(":")[2]
        if name and name not in names and _names_a_file(name):
            names.append(name)
    return names


def _names_a_file(name: str) -> bool:
    """Whether a backend's name (read from a results.json, which anyone may have written) can name
    a file inside the directory it is looked for in: no separator, no leading dot (no "..", no
    hidden file), nothing unprintable, and not absurdly long."""
    return (0 < len(name) <= 200 and name.isprintable() and not name.startswith(".")
            and "/" not in name and "\\" not in name and "\0" not in name)


def expectations_file(path: Path, names: list[str], suffix: str = ".yaml") -> Path | None:
    """``path`` itself (or the skips file beside it), or ``path/<name><suffix>`` for a directory."""
    if not path.is_dir():
        file = path if suffix == ".yaml" else path.with_name(path.name.removesuffix(".yaml") + suffix)
        return file if file.exists() else None
    return next((path / f"{name}{suffix}" for name in names if (path / f"{name}{suffix}").exists()), None)


def load_expectations(path: Path, backend: str, fallback: str | None = None,
                      details: dict[str, str] | None = None) -> Expectations | None:
    """The expectations of ``backend``: ``path`` itself, or ``path/<name>.yaml`` for a directory
    (:func:`file_names`). An entry with ``when`` applies only where the backend's ``details()``
    have one of the values given (an optimization level, an execution provider)."""
    file = expectations_file(path, file_names(backend, fallback))
    return None if file is None else _load(file, "expectations.schema.json", backend, fallback, details)


def load_skips(path: Path, backend: str, fallback: str | None = None,
               details: dict[str, str] | None = None) -> Expectations | None:
    """The items never to run on ``backend`` (they hang it or take the machine down):
    ``<name>.skips.yaml`` beside its expectations."""
    file = expectations_file(path, file_names(backend, fallback), SKIPS_SUFFIX)
    return None if file is None else _load(file, "skips.schema.json", backend, fallback, details)


def _load(file: Path, schema: str, backend: str, fallback: str | None, details: dict[str, str] | None) -> Expectations:
    source = read_yaml(file, schema)
    if source.data["backend"] not in {backend, fallback, *file_names(backend, fallback)}:
        raise source.error(("backend",), f"lists {source.data['backend']!r}, not the backend under test {backend!r}")
    entries = []
    for index, entry in enumerate(source.data["entries"]):
        when = {key: [value] if isinstance(value, str) else value for key, value in entry.get("when", {}).items()}
        if any((details or {}).get(key) not in values for key, values in when.items()):
            continue
        where = f"{file}:{source.line(('entries', index))}"
        outcome = Outcome(entry.get("outcome", Outcome.SKIPPED.value))
        entries.append(Expectation(entry.get("match", "*"), outcome, entry["reason"], entry.get("link"), where,
                                   bool(entry.get("flaky", False)), entry.get("cause"), entry.get("diagnosis")))
    return Expectations(entries, file)

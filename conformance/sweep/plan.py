"""A sweep file: which runtimes, at which releases, with which pins, run the suite (one cell each).

    runtimes:
      - backend: ort                      # the --backend each cell runs
        package: onnxruntime              # its distribution on PyPI
        releases: {minors_from: "1.15"}   # every minor from 1.15 at its latest patch, or a list
        pins: {"<1.18": ["numpy<2"]}      # what old wheels need beside them, by release range
        pytest: ["--conformance-sample"]  # arguments this runtime's cells add (optional)
    pytest: ["-k", "maxpool"]             # arguments every cell adds (a case file, a selection)

``minors_from`` is resolved against PyPI's JSON API: the final releases with a wheel this Python
can install, the newest patch of each minor. The answer is kept beside the cells, so that a sweep
that cannot reach PyPI runs the releases it resolved last.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ..load.cases import read_yaml
from ..load.limits import ReadRefused, read_state_text
from ..atomic import write_atomically

PYPI = "https://pypi.org/pypi/{package}/json"
MAX_INDEX_BYTES = 64 * 1024 * 1024  # onnxruntime's page is a few MiB
SUITE_PARTS = ("conformance", "reference_backend", "cases", "pyproject.toml")


class SweepError(ValueError):
    """A sweep file or a release list that cannot be used (one line)."""


@dataclass(frozen=True)
class Cell:
    """One runtime at one release: an environment of its own, one run of the suite."""

    backend: str
    package: str
    version: str
    pins: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.backend}@{self.version}"

    @property
    def directory_name(self) -> str:
        return re.sub(r"[^\w.@+=-]", "_", self.label)

    def key(self, revision: str) -> str:
        """What a finished cell is reused by: the release, its pins, the run's arguments, the
        suite's revision and the Python it runs on."""
        text = json.dumps([self.backend, self.package, self.version, self.pins, self.pytest_args, revision,
                           sys.version_info[:2]])
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass
class Sweep:
    cells: list[Cell]
    notes: list[str] = field(default_factory=list)  # how each release list was resolved


def read_sweep(path: Path, state: Path, offline: bool = False) -> Sweep:
    """The cells of the sweep file ``path``; ``state``: where resolved release lists are kept."""
    source = read_yaml(path, "sweep.schema.json")
    data = source.data
    extra = tuple(data.get("pytest", []))
    cells, notes = [], []
    for runtime in data["runtimes"]:
        releases = runtime["releases"]
        if isinstance(releases, list):
            versions = [str(v) for v in releases]
        else:
            versions, note = _minors_from(runtime["package"], str(releases["minors_from"]), state, offline)
            notes.append(f"{runtime['package']}: {note}")
        for version in versions:
            cells.append(Cell(runtime["backend"], runtime["package"], version, _pins(runtime.get("pins", {}), version),
                              (*extra, *runtime.get("pytest", []))))
    return Sweep(cells, notes)


def _pins(rules: dict[str, list[str]], version: str) -> tuple[str, ...]:
    pins: list[str] = []
    for spec, wanted in rules.items():
        try:
            if Version(version) in SpecifierSet(spec):
                pins.extend(wanted)
        except (InvalidSpecifier, InvalidVersion) as e:
            raise SweepError(f"pins {spec!r} for {version}: {e}") from None
    return tuple(pins)


def _minors_from(package: str, first: str, state: Path, offline: bool) -> tuple[list[str], str]:
    """The newest installable patch of every minor from ``first`` on, newest minor last."""
    cached = state / f"releases-{package}.json"
    try:
        if offline:
            raise OSError("offline")
        releases = _installable(package)
        state.mkdir(parents=True, exist_ok=True)
        write_atomically(cached, json.dumps(releases))  # a link in its place is replaced, never written through
        how = "from PyPI"
    except (OSError, ValueError) as e:
        try:  # a regular file within the bound: a FIFO or /dev/zero in its place is refused at once
            releases = json.loads(read_state_text(cached, MAX_INDEX_BYTES))
        except (OSError, ValueError, RecursionError, ReadRefused):
            raise SweepError(f"cannot list the releases of {package} ({e}) and none were listed before") from None
        if not (isinstance(releases, list) and all(isinstance(v, str) for v in releases)):
            raise SweepError(f"{cached}: not a list of releases")
        how = f"as listed before ({cached}; PyPI: {e})"
    try:
        start = Version(first)
    except InvalidVersion:
        raise SweepError(f"minors_from {first!r} is not a version") from None
    newest: dict[tuple[int, int], Version] = {}
    for text in releases:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        minor = (version.major, version.minor)
        if version >= start and not version.is_prerelease and (minor not in newest or version > newest[minor]):
            newest[minor] = version
    chosen = [str(newest[m]) for m in sorted(newest)]
    return chosen, f"{len(chosen)} minors from {first} {how}"


def _installable(package: str) -> list[str]:
    """The releases of ``package`` with a wheel for this interpreter and platform."""
    with urllib.request.urlopen(PYPI.format(package=package), timeout=30) as answer:
        page = json.loads(answer.read(MAX_INDEX_BYTES + 1)[:MAX_INDEX_BYTES])
    tags = set(sys_tags())
    found = []
    for version, files in page.get("releases", {}).items():
        for file in files:
            try:
                _, _, _, wheel_tags = parse_wheel_filename(file.get("filename", ""))
            except InvalidWheelFilename:
                continue
            if not file.get("yanked") and wheel_tags & tags:
                found.append(version)
                break
    return found


def suite_revision(root: Path) -> str:
    """A digest of the suite's code, cases and dependencies: a cell run by other code runs again."""
    digest = hashlib.sha256()
    for part in SUITE_PARTS:
        path = root / part
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for file in files:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def as_matrix(cells: list[Cell]) -> dict[str, Any]:
    """A CI matrix of the cells (GitHub Actions' ``strategy.matrix`` include form)."""
    return {"include": [{"cell": c.label, "backend": c.backend, "package": c.package, "version": c.version}
                        for c in cells]}

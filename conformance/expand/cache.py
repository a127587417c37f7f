"""Expanded case files, cached between runs in pytest's cache directory (``.pytest_cache``).

Parsing and validating the YAML, then expanding it, is most of a run's start (about 5 s on two
cores), and a pasted repro line (``-k <id>``) needs it all to find its one item. The items of a
file (before any model is built: that happens when an item runs) are kept under a key made of
every byte they can depend on: the case directory's files (a case may derive from another file),
the bundled registry, the suite's own code, schemas and signatures, and the reading budgets
(``--conformance-limit``); any change makes a new key. The registry of open questions is kept
the same way. What does not load is never cached: its error shows every time.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
from pathlib import Path
from typing import Callable, TypeVar

from ..load.cases import Ambiguity, bundled_case_dir, load_case_file, load_registry
from ..load.limits import Limits
from .items import Item, expand

PACKAGE_DIR = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def suite_digest(case_dir: Path, limits: Limits) -> str:
    """A digest of what loading ``case_dir`` depends on. Only regular files within the budget
    are read: a FIFO or device named like a case file, or a huge one, enters by its name, type,
    size and time (the loader refuses it anyway, so nothing of it is cached)."""
    digest = hashlib.sha256(repr(limits).encode())
    inputs = [*case_dir.rglob("*"), *bundled_case_dir().glob("*.yaml"), *PACKAGE_DIR.rglob("*.py"),
              *PACKAGE_DIR.rglob("*.yaml"), *PACKAGE_DIR.glob("schema/*.json")]
    for path in sorted(set(inputs)):
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= limits.file_bytes:
            digest.update(f"{path}\0{info.st_size}\0".encode() + path.read_bytes())
        else:
            digest.update(f"{path}\0{info.st_mode}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:24]


class ExpansionCache:
    def __init__(self, directory: Path, case_dir: Path, limits: Limits):
        self.directory, self.digest = directory, suite_digest(case_dir, limits)

    def registry(self, case_dir: Path, limits: Limits) -> dict[str, Ambiguity]:
        return self._cached(f"registry{_short(case_dir)}", lambda: load_registry(case_dir, limits))

    def items(self, file: Path, registry: dict[str, Ambiguity], limits: Limits) -> list[Item]:
        return self._cached(_short(file), lambda: expand_file(file, registry, limits))

    def _cached(self, name: str, compute: Callable[[], T]) -> T:
        entry = self.directory / f"{self.digest}-{name}.pickle"
        try:
            return pickle.loads(entry.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass
        value = compute()
        for stale in self.directory.glob(f"*-{name}.pickle"):  # the same thing under older keys
            stale.unlink(missing_ok=True)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")  # xdist workers write side by side
        temporary.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        temporary.replace(entry)
        return value


def _short(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


def expand_file(file: Path, registry: dict[str, Ambiguity], limits: Limits) -> list[Item]:
    return [item for case in load_case_file(file, registry, limits) for item in expand(case)]

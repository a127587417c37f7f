"""Expanded case files, cached between runs in pytest's cache directory (``.pytest_cache``).

Parsing and validating the YAML, then expanding it, is most of a run's start (about 5 s on two
cores), and a pasted repro line (``-k <id>``) needs it all to find its one item. The items of a
file (before any model is built: that happens when an item runs) are kept under a key made of
every byte they can depend on: the case directory's files (a case may derive from another file),
the bundled registry, and the suite's own code, schemas and signatures; any change makes a new
key. The registry of open questions is kept the same way. A file that does not load is never
cached: its error shows every time.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from typing import Callable, TypeVar

from .cases import Ambiguity, bundled_case_dir, load_case_file, load_registry
from .expand import Item, expand

PACKAGE_DIR = Path(__file__).resolve().parent
T = TypeVar("T")


def suite_digest(case_dir: Path) -> str:
    digest = hashlib.sha256()
    inputs = [*case_dir.rglob("*.yaml"), *bundled_case_dir().glob("*.yaml"), *PACKAGE_DIR.rglob("*.py"),
              *PACKAGE_DIR.glob("*.yaml"), *PACKAGE_DIR.glob("schema/*.json")]
    for path in sorted(set(inputs)):
        digest.update(f"{path}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


class ExpansionCache:
    def __init__(self, directory: Path, case_dir: Path):
        self.directory, self.case_dir, self.digest = directory, case_dir, suite_digest(case_dir)

    def registry(self) -> dict[str, Ambiguity]:
        return self._cached("registry", lambda: load_registry(self.case_dir))

    def items(self, file: Path, registry: dict[str, Ambiguity]) -> list[Item]:
        return self._cached(hashlib.sha256(str(file).encode()).hexdigest()[:16], lambda: expand_file(file, registry))

    def _cached(self, name: str, compute: Callable[[], T]) -> T:
        entry = self.directory / f"{self.digest}-{name}.pickle"
        try:
            return pickle.loads(entry.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass
        value = compute()
        for stale in self.directory.glob(f"*-{name}.pickle"):  # the same thing under older keys
            stale.unlink(missing_ok=True)
        temporary = entry.with_suffix(f".{id(value)}.tmp")  # xdist workers write side by side
        temporary.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        temporary.replace(entry)
        return value


def expand_file(file: Path, registry: dict[str, Ambiguity]) -> list[Item]:
    return [item for case in load_case_file(file, registry) for item in expand(case)]

"""Expanded case files, cached between runs in pytest's cache directory (``.pytest_cache``).

Parsing and validating the YAML, then expanding it, is most of a run's start (about 5 s on two
cores), and a pasted repro line (``-k <id>``) needs it all to find its one item. The items of a
file (before any model is built: that happens when an item runs) are kept under a key made of
every byte they can depend on: the case directory's files (a case may derive from another file),
the bundled registry, and the suite's own code, schemas and signatures; any change makes a new
key. A file that does not load is never cached: its error shows every time.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from .cases import Ambiguity, bundled_case_dir, load_case_file
from .expand import Item, expand

PACKAGE_DIR = Path(__file__).resolve().parent


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
        self.directory, self.digest = directory, suite_digest(case_dir)

    def items(self, file: Path, registry: dict[str, Ambiguity]) -> list[Item]:
        entry = self.directory / f"{self.digest}-{hashlib.sha256(str(file).encode()).hexdigest()[:16]}.pickle"
        try:
            return pickle.loads(entry.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass
        items = expand_file(file, registry)
        for stale in self.directory.glob(f"*-{entry.name.split('-', 1)[1]}"):  # this file under older keys
            stale.unlink(missing_ok=True)
        temporary = entry.with_suffix(f".{id(items)}.tmp")  # xdist workers write side by side
        temporary.write_bytes(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL))
        temporary.replace(entry)
        return items


def expand_file(file: Path, registry: dict[str, Ambiguity]) -> list[Item]:
    return [item for case in load_case_file(file, registry) for item in expand(case)]

"""Which item a script is of: the command that writes it, and the item found again from its id."""

from __future__ import annotations

import functools
import shlex
from pathlib import Path
from typing import Callable, Iterable

from ..expand.cache import expand_file
from ..expand.items import Item
from ..load.cases import CaseError, bundled_case_dir, case_files, load_registry
from ..load.limits import DEFAULT_LIMITS


class ReproError(Exception):
    """The item cannot be found or rebuilt (one line)."""


def command(item_id: str, spec: str, seed: int, case_dir: Path | None) -> str:
    """The command line that writes an item's script (results.json's ``script``)."""
    words = ["conformance", "repro", item_id, f"--backend={spec}", f"--seed={seed}"]
    if case_dir is not None and case_dir.resolve() != bundled_case_dir().resolve():
        words.append(f"--cases={case_dir}")
    return shlex.join(words)


def find_item(item_id: str, case_dir: Path, file: str | None = None,
              items_of: Callable[[Path], Iterable[Item]] | None = None) -> Item:
    """The item, from its case file when known (``file``, relative to the case directory's parent,
    as results.json writes it: one file to expand), else from all; ``items_of``: a file's items
    where they are at hand (a run's expansion cache)."""
    if not case_dir.is_dir():
        raise ReproError(f"--cases {case_dir}: not a directory")
    try:
        if items_of is None:
            registry = load_registry(case_dir)
            items_of = functools.partial(expand_file, registry=registry, limits=DEFAULT_LIMITS)
        files = case_files(case_dir)
        named = (case_dir.parent / file).resolve() if file else None
        if named is not None and named.is_file() and named.is_relative_to(case_dir.resolve()):
            files = [named]
        for path in files:
            for item in items_of(path):
                if item.id == item_id:
                    return item
    except CaseError as e:
        raise ReproError(str(e).splitlines()[0]) from None
    raise ReproError(f"no item {item_id} in {case_dir} (ids as in the report: Op-version/case[element type])")

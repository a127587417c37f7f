"""The bundled cases, loaded once per test process: a dozen test modules read them, and each
load (parse, validate, expand 10,000 items) costs seconds."""

from __future__ import annotations

from functools import cache

from conformance.expand.items import Item, load_items
from conformance.load.cases import Ambiguity, bundled_case_dir, load_registry


@cache
def bundled_registry() -> dict[str, Ambiguity]:
    return load_registry(bundled_case_dir())


@cache
def bundled_items() -> tuple[Item, ...]:
    """Every bundled item, in file and case order (the tests only read them)."""
    return tuple(load_items(bundled_case_dir(), bundled_registry()))


def bundled_script(item: Item, backend: str, seed: int = 0) -> str:
    """The item's standalone script, its expected outputs from the oracle (computed, no run's cache)."""
    from conformance.judge.oracle import script_values
    from conformance.scripts.standalone import item_script

    return item_script(item, backend, seed, *script_values(item, seed, bundled_registry()))

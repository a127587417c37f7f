"""The bundled cases, loaded once per test process: a dozen test modules read them, and each
load (parse, validate, expand about 16,000 items) costs seconds. They come through the user's
sealed cache of the bundled cases, as every run's do (conformance/expand/cache.py: it decides
nothing, tests/test_cache_decides_nothing.py), so that collecting the tests costs seconds less
in each xdist worker; the tests of the loader itself load the files directly."""

from __future__ import annotations

from functools import cache

from conformance.expand.cache import ExpansionCache, shared_cache_directory
from conformance.expand.items import Item, load_items
from conformance.load.cases import Ambiguity, bundled_case_dir, case_files, load_registry
from conformance.load.limits import DEFAULT_LIMITS


@cache
def _user_cache() -> ExpansionCache | None:
    directory = shared_cache_directory()
    try:
        return None if directory is None else ExpansionCache(directory, bundled_case_dir(), DEFAULT_LIMITS)
    except OSError:  # no cache key can be kept: the cases are loaded uncached
        return None


@cache
def bundled_registry() -> dict[str, Ambiguity]:
    user_cache = _user_cache()
    if user_cache is None:
        return load_registry(bundled_case_dir())
    return user_cache.registry(bundled_case_dir(), DEFAULT_LIMITS)


@cache
def bundled_items() -> tuple[Item, ...]:
    """Every bundled item, in file and case order (the tests only read them)."""
    user_cache = _user_cache()
    if user_cache is None:
        return tuple(load_items(bundled_case_dir(), bundled_registry()))
    return tuple(item for file in case_files(bundled_case_dir())
                 for item in user_cache.items(file, bundled_registry(), DEFAULT_LIMITS))


def bundled_script(item: Item, backend: str, seed: int = 0) -> str:
    """The item's standalone script, its expected outputs from the oracle (computed, no run's cache)."""
    from conformance.judge.oracle import script_values
    from conformance.scripts.standalone import item_script

    return item_script(item, backend, seed, *script_values(item, seed, bundled_registry()))

"""A cache may save time, never decide a verdict: each forgery of the expansion and oracle caches
that once flipped a verdict (a model that outputs the expected value, an item dropped from a
file's ids, a reject flag, literal expected values) is well formed here, so that nothing but the
seal stands in its way; sealed by no one, or with another user's key (a cache copied in: a
committed ``.pytest_cache``, a restored CI cache), it is computed again, exactly as without a
cache. The same forgery sealed with the user's own key is believed: the seal is what stops it."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from conformance.expand import cache as cache_module
from conformance.expand import codec
from conformance.expand.cache import ExpansionCache, expand_file, seal, unseal
from conformance.judge import oracle as oracle_module
from conformance.judge.oracle import consult
from conformance.load.cases import bundled_case_dir, load_registry
from conformance.load.limits import DEFAULT_LIMITS
from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

BUNDLED = bundled_case_dir()
FILE = BUNDLED / "maxpool.yaml"  # literal expected values, and must-reject items
ROOT = PACKAGE_DIR.parent


@pytest.fixture(scope="module")
def registry():
    return load_registry(BUNDLED)


@pytest.fixture
def store(tmp_path, registry):
    directory = tmp_path / "conformance-items"
    directory.mkdir()
    store = ExpansionCache(directory, BUNDLED, DEFAULT_LIMITS)
    store.items(FILE, registry, DEFAULT_LIMITS)
    return store


SEALS = {"sealed by no one": None, "sealed with another user's key": secrets.token_bytes(32)}


def forge(store, suffix: str, change, key):
    """The entry ending in ``suffix``, decoded, changed and written back well formed, sealed with ``key``."""
    entry = store.directory / f"{store.digest}-{cache_module._short(FILE)}{suffix}.json"
    value = change(codec.loads(unseal(store.key, entry.name, entry.read_bytes())))
    data = codec.dumps(value)
    entry.write_bytes(data if key is None else seal(key, entry.name, data))
    return value


def rejecting(items):
    return [dataclasses.replace(i, case=dataclasses.replace(i.case, reject="forged")) for i in items]


def zeroed(items):
    return [dataclasses.replace(i, outputs=tuple(dataclasses.replace(o, expected=None if o.expected is None else
                                                                     np.zeros_like(o.expected)) for o in i.outputs))
            for i in items]


FORGERIES = {  # name: (the entry's suffix, the change, what reads it back)
    "a reject flag on every valid item": ("-part0", rejecting, "items"),  # the file's one part (96 items)
    "literal expected values zeroed": ("-part0", zeroed, "items"),
    "an item dropped from the file's ids": ("-ids", lambda ids: ids[1:], "ids"),
}


@pytest.mark.parametrize("seal_by", SEALS)
@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_forged_entry_is_computed_again(store, registry, forgery, seal_by):
    suffix, change, reader = FORGERIES[forgery]
    forged = forge(store, suffix, change, SEALS[seal_by])
    fresh = expand_file(FILE, registry, DEFAULT_LIMITS)
    read = getattr(store, reader)(FILE, registry, DEFAULT_LIMITS)
    expected = fresh if reader == "items" else [i.id for i in fresh]
    assert codec.dumps(read) == codec.dumps(expected) != codec.dumps(forged)


@pytest.mark.parametrize("forgery", FORGERIES)
def test_the_same_forgery_sealed_with_the_user_s_key_is_believed(store, registry, forgery):
    """The control: the forgeries above are well formed, and only the seal refuses them."""
    suffix, change, reader = FORGERIES[forgery]
    forged = forge(store, suffix, change, store.key)
    assert codec.dumps(getattr(store, reader)(FILE, registry, DEFAULT_LIMITS)) == codec.dumps(forged)


def test_a_selection_decodes_only_the_parts_that_hold_its_ids_and_a_part_of_other_ids_is_computed_again(
        tmp_path, registry, monkeypatch):
    monkeypatch.setattr(cache_module, "PART_ITEMS", 20)  # maxpool.yaml's 96 items in five parts
    store = ExpansionCache(tmp_path, BUNDLED, DEFAULT_LIMITS)
    fresh = store.items(FILE, registry, DEFAULT_LIMITS)
    wanted = fresh[50].id
    decoded = []
    load = store._load
    monkeypatch.setattr(store, "_load", lambda name, kind: decoded.append(name) or load(name, kind))
    assert [i.id for i in store.items(FILE, registry, DEFAULT_LIMITS, lambda i: i == wanted)] == \
        [i.id for i in fresh[40:60]]
    assert [name.rpartition("-")[2] for name in decoded] == ["ids", "part2"]
    # part 2 holding part 1's items, sealed with the user's key: well formed, of the wrong ids
    forge(store, "-part2", lambda _: fresh[20:40], store.key)
    assert [i.id for i in store.items(FILE, registry, DEFAULT_LIMITS)] == [i.id for i in fresh]


def test_entries_of_other_keys_unchanged_for_a_fortnight_are_removed_and_nothing_else(tmp_path, registry):
    store = ExpansionCache(tmp_path, BUNDLED, DEFAULT_LIMITS)
    old = time.time() - (cache_module.STALE_DAYS + 1) * 86400
    other = {name: tmp_path / name for name in ("0" * 24 + "-abc-ids.json", "1" * 24 + "-values-abc-0-1-2.json")}
    recent, current = tmp_path / ("2" * 24 + "-abc-ids.json"), tmp_path / f"{store.digest}-registryabc.json"
    for path in [*other.values(), recent, current]:
        path.write_text("{}")
    for path in [*other.values(), current]:
        os.utime(path, (old, old))
    (tmp_path / "elsewhere.json").write_text("{}")
    os.utime(tmp_path / "elsewhere.json", (old, old))  # no entry's name: not the cache's to remove
    linked = tmp_path / ("3" * 24 + "-abc-ids.json")
    linked.symlink_to(tmp_path / "elsewhere.json")
    os.utime(linked, (old, old), follow_symlinks=False)
    store.items(FILE, registry, DEFAULT_LIMITS)  # expands the file: the moment entries are pruned
    assert not any(path.exists() for path in other.values())
    assert recent.exists() and current.exists() and linked.is_symlink() and (tmp_path / "elsewhere.json").exists()


def _forged_oracle_fragment(store, item, registry, key):
    """The item's kept oracle with another item's model in it (a model whose answer is not the
    item's), as a fragment sealed with ``key``; returns the forged model."""
    values = store.values(0)
    other = next(i for i in store.items(FILE, registry, DEFAULT_LIMITS) if i.model != item.model and not i.case.reject)
    plain = oracle_module._to_plain(item, consult(item, 0, registry))
    plain["model"] = np.frombuffer(other.model.SerializeToString(), np.uint8)
    prefix = values._prefix(item.case.file)
    fragment = cache_module._fragment({item.id: json.dumps(codec.encode(plain)).encode()})
    (store.directory / f"{prefix}planted.json").write_bytes(fragment if key is None else seal(key, prefix, fragment))
    return other.model


@pytest.mark.parametrize("seal_by", SEALS)
def test_a_forged_model_in_a_kept_oracle_is_computed_again(store, registry, seal_by):
    item = next(i for i in store.items(FILE, registry, DEFAULT_LIMITS) if not i.case.reject)
    _forged_oracle_fragment(store, item, registry, SEALS[seal_by])
    assert consult(item, 0, registry, store.values(0)).model == item.model


def test_a_forged_model_sealed_with_the_user_s_key_is_believed(store, registry):
    item = next(i for i in store.items(FILE, registry, DEFAULT_LIMITS) if not i.case.reject)
    forged = _forged_oracle_fragment(store, item, registry, store.key)
    assert consult(item, 0, registry, store.values(0)).model == forged


def test_fragments_that_do_not_verify_are_pruned_and_bounded_in_number(store, registry, monkeypatch):
    item = next(i for i in store.items(FILE, registry, DEFAULT_LIMITS) if not i.case.reject)
    values = store.values(0)
    prefix = values._prefix(item.case.file)
    for n in range(5):
        (store.directory / f"{prefix}planted{n}.json").write_bytes(b"0" * 64 + b"\n{}\n")
    monkeypatch.setattr(cache_module, "MAX_FRAGMENTS", 3)
    read = []
    monkeypatch.setattr(cache_module, "read_regular", lambda *a, **k: read.append(a) or b"")
    assert values.get(item.case.file, item.id) is None and not read  # over the bound: none is read
    monkeypatch.undo()
    values.save()  # nothing computed, yet the planted fragments go
    assert not list(store.directory.glob(f"{prefix}planted*"))


def test_a_cache_copied_in_from_another_user_decides_nothing_in_a_real_run(tmp_path):
    """End to end: a backend that raises on every item has errors; its cache, with every item
    turned must-reject, copied to a user with another key, gives the same errors (and to the
    user who made it, sealed with their key, it would pass: the control)."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "small.yaml").write_text(SMALL_CASE)
    cache = tmp_path / "cache"

    def run(config_home):
        command = [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "--cases", str(cases), "-q", "-p", "cacheprovider",
                   "-o", f"cache_dir={cache}", "--backend=tests.meta.support.faulty_backends:Raises", "--isolation=none"]
        env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)

    first = run(tmp_path / "maker")
    assert first.returncode == 1 and " error" in counts(first), first.stdout + first.stderr
    directory = cache / "d" / "conformance-items"
    key = bytes.fromhex((tmp_path / "maker" / "maxpool-conformance" / "cache-key").read_text())
    [entry] = (e for e in directory.glob("*.json") if "-ids" not in e.name and "values" not in e.name
               and "registry" not in e.name)
    forged = codec.dumps(rejecting(codec.loads(unseal(key, entry.name, entry.read_bytes()))))
    entry.write_bytes(seal(key, entry.name, forged))
    copied = tmp_path / "copied"
    shutil.copytree(cache, copied)
    assert run(tmp_path / "maker").returncode == 0  # the control: the maker's own seal is believed
    shutil.rmtree(cache)
    shutil.copytree(copied, cache)
    again = run(tmp_path / "another user")
    assert again.returncode == 1 and counts(again) == counts(first), again.stdout


def counts(done) -> str:
    """pytest's closing line without its time."""
    return done.stdout.splitlines()[-1].rpartition(" in ")[0]


def test_the_user_s_key_lives_outside_the_cache_and_is_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    key = cache_module.user_key()
    path = tmp_path / "config" / "maxpool-conformance" / "cache-key"
    assert len(key) == 32 and path.stat().st_mode & 0o077 == 0 and cache_module.user_key() == key
    path.write_text("garbage")  # not a key: replaced by a new one
    assert cache_module.user_key() not in (key, b"garbage")

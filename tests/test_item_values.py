"""The items' oracles kept between runs (expand.cache.ItemValues, judge.oracle): what a run reads
back judges every item exactly as computing it again would, two processes never lose each other's
values, and whatever stands in their place (garbage, a value of another form, a changed reference)
is computed again or caught by the lock, never judged from."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from conformance.backends import load_backend
from conformance.expand import cache as cache_module
from conformance.expand.cache import ExpansionCache, ItemValues
from conformance.judge import oracle as oracle_module
from conformance.judge.lock import Lock, LockError, lock_path
from conformance.judge.oracle import consult
from conformance.judge.verdict import evaluate
from conformance.load.cases import bundled_case_dir
from conformance.load.limits import DEFAULT_LIMITS
from tests.support.bundled import bundled_items, bundled_registry

BUNDLED = bundled_case_dir()
# a derived file, a literal one and one of open questions (the other readings' answers are kept too)
FILES = ("maxunpool_edges.yaml", "maxpool.yaml", "maxpool_open_questions.yaml")


@pytest.fixture(scope="module")
def items():
    chosen = [i for i in bundled_items() if i.case.file.name in FILES and not i.case.reject]
    return chosen[::7]  # every file, every kind of output, in a few seconds


@pytest.fixture
def directory(tmp_path):
    return tmp_path / "conformance-items"


def stores(directory, seed=0) -> ItemValues:
    directory.mkdir(exist_ok=True)
    return ExpansionCache(directory, BUNDLED, DEFAULT_LIMITS).values(seed)


def fields(verdict) -> dict:
    return dataclasses.asdict(verdict)


def test_a_kept_oracle_judges_every_item_as_computing_it_again(directory, items):
    registry, backend = bundled_registry(), load_backend("tests.meta.support.faulty_backends:WrongAtVersion12")
    cold = stores(directory)
    first = [fields(evaluate(i, backend, 0, registry, store=cold)) for i in items]
    cold.save()
    warm = stores(directory)
    with pytest.MonkeyPatch.context() as patch:  # the warm store must not need the reference at all
        patch.setattr(oracle_module, "derive", lambda *a: pytest.fail("derived again"))
        patch.setattr(oracle_module, "questions", lambda *a: pytest.fail("asked again"))
        second = [fields(evaluate(i, backend, 0, registry, store=warm)) for i in items]
    uncached = [fields(evaluate(i, backend, 0, registry)) for i in items]
    assert first == second == uncached
    assert {v["outcome"].value for v in first} >= {"pass", "fail", "divergent"}
    assert not warm.computed  # nothing new to write


def test_an_item_run_on_a_second_backend_reads_the_oracle_its_first_run_computed(directory, items):
    registry = bundled_registry()
    store = stores(directory)
    first = consult(items[0], 0, registry, store)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(oracle_module, "derive", lambda *a: pytest.fail("derived again"))
        again = consult(items[0], 0, registry, store)
    assert again.model.SerializeToString() == first.model.SerializeToString()


def test_an_oracle_reads_back_bit_for_bit(directory, items):
    registry = bundled_registry()
    store = stores(directory, seed=3)
    computed = [consult(i, 3, registry, store) for i in items]
    store.save()
    again = stores(directory, seed=3)
    for item, one in zip(items, computed):
        other = again.get(item.case.file, item.id)
        read = oracle_module._from_plain(item, other)
        assert read is not None, item.id
        assert read.model.SerializeToString() == one.model.SerializeToString()
        for name in one.expected:
            assert one.expected[name].tobytes() == read.expected[name].tobytes()
            assert one.expected[name].dtype == read.expected[name].dtype
        assert read.found.ids == one.found.ids
        assert read.found.alternatives.keys() == one.found.alternatives.keys()
        for key, answers in one.found.alternatives.items():
            for reading, answer in answers.items():
                assert answer.same_as(read.found.alternatives[key][reading]) and answer.refusal == read.found.alternatives[key][reading].refusal
    assert stores(directory, seed=4).get(items[0].case.file, items[0].id) is None  # another seed: other inputs


def test_two_processes_writing_side_by_side_lose_nothing_and_the_next_writer_merges(directory, items):
    registry = bundled_registry()
    first, second, third = [i for i in items if i.case.file == items[0].case.file][:3]
    one, other = stores(directory), stores(directory)  # both read before either writes, as two workers do
    consult(first, 0, registry, one)
    consult(second, 0, registry, other)
    one.save()
    other.save()
    assert len(list(directory.glob("*-values-*.json"))) == 2
    merging = stores(directory)
    assert merging.get(first.case.file, first.id) is not None and merging.get(second.case.file, second.id) is not None
    consult(third, 0, registry, merging)
    merging.save()
    assert len(list(directory.glob("*-values-*.json"))) == 1  # the two it read, replaced by the one it wrote
    merged = stores(directory)
    assert all(merged.get(i.case.file, i.id) is not None for i in (first, second, third))


def _planted(directory, item, value):
    """A fragment holding ``value`` (JSON) as the item's entry, alone, sealed with the user's own key:
    what an earlier run of this user's could have left (tests/test_cache_decides_nothing.py plants
    what it could not)."""
    store = stores(directory)
    for old in directory.glob("*-values-*.json"):
        old.unlink()
    prefix = store._prefix(item.case.file)
    fragment = cache_module._fragment({item.id: json.dumps(value).encode()})
    (directory / f"{prefix}planted.json").write_bytes(cache_module.seal(store.secret, prefix, fragment))


@pytest.mark.parametrize("fragment", [b"", b"[]\n", b'{"x": [0, 99]}\n{}', b'{"x": [2, 1]}\nabc', b'{"x": "0"}\n', b"\xff\n"])
def test_a_fragment_that_is_no_fragment_is_passed_over(directory, items, fragment):
    registry = bundled_registry()
    store = stores(directory)
    prefix = store._prefix(items[0].case.file)
    (directory / f"{prefix}planted.json").write_bytes(cache_module.seal(store.secret, prefix, fragment))
    consult(items[0], 0, registry, store)
    store.save()
    assert stores(directory).get(items[0].case.file, items[0].id) is not None


@pytest.mark.parametrize("how", ["not codec entries", "another form", "a model that is no model", "an input of another type",
                                 "a derived output of another type"])
def test_a_value_of_another_form_is_computed_again(directory, items, how):
    registry = bundled_registry()
    item = next(i for i in items if i.expectation == "derived")
    store = stores(directory)
    kept = oracle_module._to_plain(item, consult(item, 0, registry))
    name = next(iter(kept["written"]))
    changed = {
        "not codec entries": None,
        "another form": {"model": kept["model"]},
        "a model that is no model": dict(kept, model=np.frombuffer(b"\xff" * 64, np.uint8)),
        "an input of another type": dict(kept, written={**kept["written"], name: kept["written"][name].astype(np.float16)
                                                        if kept["written"][name].dtype != np.float16 else kept["written"][name].astype(np.float32)}),
        "a derived output of another type": dict(kept, derived={k: v.view(np.uint8) for k, v in kept["derived"].items()}),
    }[how]
    from conformance.expand import codec

    _planted(directory, item, "garbage" if changed is None else codec.encode(changed))
    store = stores(directory)
    assert consult(item, 0, registry, store).model.SerializeToString() == item.model.SerializeToString()
    assert item.id in store.computed.get(item.case.file, {})  # computed again, and written over it


def test_a_kept_derived_value_that_moved_is_caught_by_the_lock(directory):
    """A planted or stale value that passes for the item's oracle still meets the lock."""
    registry = bundled_registry()
    item = next(i for i in bundled_items() if i.expectation == "derived" and i.case.file.name == "maxunpool_edges.yaml")
    kept = consult(item, 0, registry)
    name = next(iter(kept.expected))
    moved = dataclasses.replace(kept, expected={**kept.expected, name: np.zeros_like(kept.expected[name]) + 1})
    from conformance.expand import codec

    _planted(directory, item, codec.encode(oracle_module._to_plain(item, moved)))
    with pytest.raises(LockError):
        evaluate(item, load_backend("reference"), 0, registry, Lock(lock_path()), stores(directory))


def test_the_key_changes_with_the_reference_and_its_libraries(directory, monkeypatch):
    before = stores(directory).key
    monkeypatch.setattr(np, "__version__", "0.0.0")
    assert stores(directory).key != before


def test_values_under_an_older_key_are_removed_when_a_file_s_values_are_written(directory, items):
    registry = bundled_registry()
    store = stores(directory)
    stale = directory / f"{'0' * 24}-values-{cache_module._short(items[0].case.file)}-0-1-1.json"
    stale.write_text("{}")
    consult(items[0], 0, registry, store)
    store.save()
    assert not stale.exists() and list(directory.glob(f"{store.key}-values-*.json"))

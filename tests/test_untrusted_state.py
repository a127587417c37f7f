"""The suite's own state read back as untrusted input: the expansion cache in pytest's cache
directory. Whatever stands in an entry's place means computing again: never code run, never fewer
items, never an INTERNALERROR."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.cli import main
from conformance.expand import codec
from conformance.expand.cache import ExpansionCache, expand_file, seal, unseal
from conformance.load.cases import bundled_case_dir, case_files, load_registry
from conformance.load.limits import DEFAULT_LIMITS
from conformance.plugin import PACKAGE_DIR
from tests.support.samples import SMALL_CASE

BUNDLED = bundled_case_dir()
EDGES = BUNDLED / "maxunpool_edges.yaml"


class RunsCode:
    """A pickle that runs ``touch`` when unpickled."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def ids(items):
    return [item.id for item in items]


@pytest.fixture(scope="module")
def registry():
    return load_registry(BUNDLED)


@pytest.fixture
def cache(tmp_path, registry):
    """A cache with one stored entry (maxunpool_edges.yaml's items); returns it and the entry."""
    directory = tmp_path / "conformance-items"
    directory.mkdir()
    cache = ExpansionCache(directory, BUNDLED, DEFAULT_LIMITS)
    cache.items(EDGES, registry, DEFAULT_LIMITS)
    [entry] = (e for e in directory.glob("*.json") if not e.name.endswith("-ids.json"))
    return cache, entry


def test_the_ids_are_stored_with_the_items_and_garbage_in_their_place_is_recomputed(cache, registry):
    """A repro line (-k <id>) reads a file's ids alone: stored when its items are, and read as
    untrusted as they are."""
    store, entry = cache
    [ids_entry] = entry.parent.glob("*-ids.json")
    expected = ids(expand_file(EDGES, registry, DEFAULT_LIMITS))
    assert store.ids(EDGES, registry, DEFAULT_LIMITS) == expected
    ids_entry.write_text(json.dumps([["list", [1, 2]], ["tuple", [["r", 0]]]]))  # a list, but not of ids
    assert store.ids(EDGES, registry, DEFAULT_LIMITS) == expected


def test_a_stored_entry_reads_back_as_the_same_items(cache, registry):
    store, entry = cache
    again = store.items(EDGES, registry, DEFAULT_LIMITS)
    fresh = expand_file(EDGES, registry, DEFAULT_LIMITS)
    assert ids(again) == ids(fresh) and len(fresh) > 100
    assert codec.dumps(again) == codec.dumps(fresh) == unseal(store.key, entry.name, entry.read_bytes())


def _planted(entry, tmp_path, how, key):
    """What stands in the entry's place; text sealed with the user's key, so that what reads it
    past the seal (the codec, the type checks) meets it too."""
    marker = tmp_path / "ran"
    entry.unlink()

    def write(data: bytes) -> None:
        entry.write_bytes(seal(key, entry.name, data))

    if how == "pickle running code":
        write(pickle.dumps([RunsCode(marker)]))
    elif how == "directory":
        entry.mkdir()
    elif how == "link to /dev/zero":
        entry.symlink_to("/dev/zero")
    elif how == "dangling link":
        entry.symlink_to(tmp_path / "nowhere")
    elif how == "fifo":
        os.mkfifo(entry)
    elif how == "wrong whole":
        write(json.dumps([["tuple", [["s", "items"]]]]).encode())
    elif how == "an item of the wrong type":
        write(json.dumps([["list", [1, 2]], ["tuple", [["r", 0]]]]).encode())
    elif how == "truncated":
        write(b'[["list",[')
    elif how == "not utf-8":
        write(b"\xff\xfe[]")
    elif how == "deep nesting":
        write(("[" * 100_000 + "]" * 100_000).encode())
    elif how == "huge integer":
        write(("[" + "9" * 100_000 + "]").encode())
    return marker


@pytest.mark.parametrize("how", ["pickle running code", "directory", "link to /dev/zero", "dangling link", "fifo",
                                 "wrong whole", "an item of the wrong type", "truncated", "not utf-8",
                                 "deep nesting", "huge integer"])
def test_whatever_stands_in_an_entry_s_place_is_recomputed(cache, registry, tmp_path, how):
    store, entry = cache
    marker = _planted(entry, tmp_path, how, store.key)
    items = store.items(EDGES, registry, DEFAULT_LIMITS)
    assert ids(items) == ids(expand_file(EDGES, registry, DEFAULT_LIMITS))
    assert not marker.exists()


def test_an_entry_over_the_byte_bound_is_not_read(cache, registry, monkeypatch):
    store, entry = cache
    monkeypatch.setattr("conformance.expand.cache.MAX_ENTRY_BYTES", 1000)
    read = []
    monkeypatch.setattr(codec, "loads", lambda data: read.append(data) or [])
    assert len(store.items(EDGES, registry, DEFAULT_LIMITS)) > 100 and not read


def test_an_unwritable_cache_directory_runs_uncached(tmp_path, registry):
    directory = tmp_path / "conformance-items"
    directory.write_text("a file where the directory should be")
    store = ExpansionCache(directory, BUNDLED, DEFAULT_LIMITS)
    assert len(store.items(EDGES, registry, DEFAULT_LIMITS)) > 100


def test_a_planted_temporary_name_is_never_written_through(cache, registry, tmp_path):
    """The old writer used ``<entry>.<pid>.tmp``: a link planted there would be written through."""
    store, entry = cache
    victim = tmp_path / "victim"
    victim.write_text("precious")
    entry.unlink()
    (entry.parent / f"{entry.stem}.{os.getpid()}.tmp").symlink_to(victim)
    store.items(EDGES, registry, DEFAULT_LIMITS)
    assert victim.read_text() == "precious" and entry.is_file()


@pytest.mark.parametrize("entries, says", [
    ([["Item", {"id": ["s", "x"]}], ["tuple", [["r", 0]]]], "fields"),
    ([["list", [["r", 5]]]], "not a value"),
    ([["os.system", ["s", "ls"]]], "unknown"),
    ([["array", ["object", [1], "AA=="]]], "not an array"),
    ([["array", ["float32", [3], "AA=="]]], "not an array"),
    ([["op", ["ai.onnx", "MaxPool", 99]]], "no such operator"),
    ([["dict", [[["r", 0], 1]]], ["list", []]], "not a value"),
])
def test_the_codec_refuses_what_it_did_not_write(entries, says):
    with pytest.raises(codec.CacheCorrupt, match=says):
        codec.loads(json.dumps(entries).encode())


def test_a_chain_of_references_is_nesting_too():
    chain = [["list", []]] + [["list", [["r", i]]] for i in range(200)]
    with pytest.raises(codec.CacheCorrupt, match="nests deeper"):
        codec.loads(json.dumps(chain).encode())


def test_the_codec_keeps_arrays_bit_for_bit_and_shared_objects_shared():
    negative_zero_nan = np.array([-0.0, np.nan, -np.inf], dtype=np.float32)
    shared = (1, "a")
    value = [negative_zero_nan, shared, shared, {"k": (2.5, None, True)}, np.array(2**62 + 1, dtype=np.int64)]
    negative_nan = -float("nan")
    value.append([negative_nan, -0.0, float("-inf")])
    back = codec.loads(codec.dumps(value))
    assert back[0].tobytes() == negative_zero_nan.tobytes() and back[0].dtype == np.float32
    assert struct.pack(">d", back[5][0]) == struct.pack(">d", negative_nan) and str(back[5][1:]) == "[-0.0, -inf]"
    assert back[1] is back[2] and back[3] == {"k": (2.5, None, True)} and int(back[4]) == 2**62 + 1


def _canonical(value, memo, forms):
    """Everything a value holds, floats by their bits (a NaN's sign is data: a lost one moved 168
    derived expectations), arrays by type, shape and bytes; as a number, the same for two values
    exactly when they hold the same (``forms`` numbers each distinct form once: shared parts are
    compared once, not once per place that holds them)."""
    if id(value) in memo:
        return memo[id(value)]
    if type(value) is float:
        found = ("float", struct.pack(">d", value))
    elif value is None or type(value) in (bool, int, str):
        found = (type(value).__name__, value)
    elif isinstance(value, np.ndarray):
        found = ("array", value.dtype.str, value.shape, value.tobytes())
    elif isinstance(value, np.dtype):
        found = ("dtype", value.str)
    elif isinstance(value, Path):
        found = ("path", str(value))
    elif isinstance(value, (list, tuple)):
        found = (type(value).__name__, tuple(_canonical(v, memo, forms) for v in value))
    elif isinstance(value, dict):
        found = ("dict", tuple((_canonical(k, memo, forms), _canonical(v, memo, forms)) for k, v in value.items()))
    else:
        found = (type(value).__name__, tuple((f.name, _canonical(getattr(value, f.name), memo, forms))
                                             for f in dataclasses.fields(value)))
    memo[id(value)] = number = forms.setdefault(found, len(forms))
    return number


def same_contents(one, other) -> bool:
    forms: dict = {}
    return _canonical(one, {}, forms) == _canonical(other, {}, forms)


@pytest.mark.slow
def test_every_bundled_file_s_items_read_back_as_exactly_what_was_stored(registry):
    for file in case_files(BUNDLED):
        items = expand_file(file, registry, DEFAULT_LIMITS)
        assert same_contents(codec.loads(codec.dumps(items)), items), file.name
    assert same_contents(codec.loads(codec.dumps(registry)), registry)


def test_a_planted_pickle_in_the_cache_runs_nothing_in_a_real_run(tmp_path):
    """End to end: a pickle at every name the cache uses, in a user's run."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "small.yaml").write_text(SMALL_CASE)
    command = [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "--cases", str(cases), "--co", "-q",
               "-p", "cacheprovider", "-o", f"cache_dir={tmp_path / 'cache'}"]
    first = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    entries = list((tmp_path / "cache" / "d" / "conformance-items").iterdir())
    # the registry, the file's items, and their ids (which a -k <id> run reads alone)
    assert first.returncode == 0 and len(entries) == 3, first.stdout + first.stderr
    marker = tmp_path / "ran"
    for entry in entries:
        entry.write_bytes(pickle.dumps([RunsCode(marker)]))
        entry.with_suffix(".pickle").write_bytes(pickle.dumps([RunsCode(marker)]))
    again = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.count("small[") == first.stdout.count("small[") > 0
    one = subprocess.run([*command, "-k", "MaxPool-12/small"], capture_output=True, text=True, cwd=tmp_path)
    assert one.returncode == 0 and one.stdout.count("small[") == 1, one.stdout + one.stderr
    assert not marker.exists()


# --- results.json, read back by `conformance compare`, `report` and `expectations` ---------------

RUN = {"schema_version": 2, "catalogue": {}, "partial": False, "interrupted": False,
       "environment": {"suite_version": "0", "backends": [{"name": "probe", "version": "1", "details": {}}],
                       "onnx": "1", "numpy": "2", "python": "3", "platform": "linux", "seed": 0, "cases": "cases"},
       "started": "2026-11-25T00:00:00+00:00", "finished": None, "summary": {"pass": 60}, "collection_errors": [],
       "items": [{"id": f"MaxPool-12/c{i}[float32]", "op": "MaxPool", "version": 12, "backend": "probe",
                  "outcome": "pass", "message": ""} for i in range(60)]}


def _hostile_results(path, how):
    if how == "100k-deep nesting":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif how == "100,000-digit integer":
        path.write_text(json.dumps(RUN).replace('"seed": 0', '"seed": ' + "9" * 100_000))
    elif how == "items as an object":
        path.write_text(json.dumps(dict(RUN, items={"a": 1})))
    elif how == "a bad item after the first 50":
        items = [dict(r) for r in RUN["items"]]
        items[55]["outcome"] = "passed, honestly"
        path.write_text(json.dumps(dict(RUN, items=items)))
    elif how == "an item of the wrong type late":
        path.write_text(json.dumps(dict(RUN, items=RUN["items"] + ["not a record"])))
    elif how == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "directory":
        path.mkdir()
    elif how == "not utf-8":
        path.write_bytes(b"\xff" * 10)
    elif how == "empty":
        path.write_text("")
    elif how == "no backend":
        path.write_text(json.dumps({**RUN, "environment": {**RUN["environment"], "backends": []}}))


HOSTILE_RESULTS = ["100k-deep nesting", "100,000-digit integer", "items as an object", "a bad item after the first 50",
                   "an item of the wrong type late", "link to /dev/zero", "fifo", "directory", "not utf-8", "empty",
                   "no backend"]


@pytest.mark.parametrize("command", ["compare", "report", "expectations"])
@pytest.mark.parametrize("how", HOSTILE_RESULTS)
def test_a_hostile_results_file_is_one_line_and_exit_2(tmp_path, capsys, command, how):
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    _hostile_results(bad, how)
    good.write_text(json.dumps(RUN))
    extra = {"compare": [str(good)], "report": ["-o", str(tmp_path / "out")], "expectations": []}[command]
    assert main([command, str(bad), *extra]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"conformance {command}: {bad}: ")


def test_the_fast_schema_check_agrees_with_jsonschema():
    """On the committed example run and on one-field mutations of a record (type, enum, extra key)."""
    import jsonschema

    from conformance.report.results import _results_check, _results_schema

    example = json.loads((PACKAGE_DIR.parent / "docs" / "example" / "results.json").read_text())
    documents = [example, RUN]
    record = example["items"][0]
    for key, value in [("outcome", "passed"), ("line", "7"), ("inputs", [{"name": "X"}]), ("attributes", []),
                       ("diff", [{"output": "Y", "summary": "s", "mask": ["x?"]}]), ("version", 12.5)]:
        documents.append(dict(RUN, items=[dict(record, **{key: value})]))
    documents += [dict(RUN, extra=1), dict(RUN, schema_version=1), {k: v for k, v in RUN.items() if k != "items"}]
    validator = jsonschema.Draft202012Validator(_results_schema())
    for document in documents:
        assert (_results_check()(document, "") is None) == validator.is_valid(document)


@pytest.mark.parametrize("command", ["export", "report", "compare", "registry", "expectations"])
@pytest.mark.parametrize("where", ["a file where a directory goes", "under a file"])
def test_an_output_path_that_cannot_be_written_is_one_line_and_exit_2_before_any_work(tmp_path, capsys, command,
                                                                                      where):
    results = tmp_path / "results.json"
    results.write_text(json.dumps(RUN))
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    target = blocker if where == "a file where a directory goes" and command in ("export", "report") else \
        (tmp_path / "a_directory" if where == "a file where a directory goes" else blocker / "x" / "out.md")
    (tmp_path / "a_directory").mkdir()
    arguments = {"export": ["export", str(target)], "report": ["report", str(results), "-o", str(target)],
                 "compare": ["compare", str(results), str(results), "--markdown", str(target)],
                 "registry": ["registry", "--output", str(target)],
                 "expectations": ["expectations", str(results), "-o", str(target)]}[command]
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"conformance {command}: {target}")
    assert blocker.read_text() == "a file"

"""Export every item in the ONNX backend-test layout, for runners that already read it:

    DIR/<kind>/test_<name>/model.onnx
    DIR/<kind>/test_<name>/test_data_set_0/input_<i>.pb, output_<i>.pb
    DIR/<kind>/test_<name>/data.json          {"rtol": 0, "atol": 0}: values compare exactly
    DIR/manifest.json                         each test's item id, kind, provenance and notes

where ``<kind>`` keeps apart what a plain runner, which compares outputs literally, may judge:
``judged`` (literal or derived expectations), ``index_ties`` (windows with several maxima: any of
their indices is right, so the exported Indices are one valid answer, not the only one),
``open_questions`` (the documents leave the behaviour open: the outputs are the reference
backend's reading, not a requirement) and ``must_reject`` (invalid models: no outputs; a
conforming runtime refuses them).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from .expand.items import Item, expand
from .judge.ambiguities import detected
from .judge.verdict import expected_outputs
from .load.cases import Ambiguity, CaseError, case_files, load_case_file, load_registry
from .atomic import write_atomically
from .semantics import node_axes


# A test's directory name: well under the 255 bytes a file name may have, whatever the case's labels.
MAX_NAME = 120
HASH_CHARS = 16


def export(case_dir: Path, target: Path, seed: int) -> tuple[dict[str, int], list[str]]:
    """(tests written per kind, one line per malformed case file, which is left out)."""
    registry = load_registry(case_dir)
    manifest: list[dict] = []
    names: set[str] = set()
    counts: dict[str, int] = {}
    errors: list[str] = []
    target.mkdir(parents=True, exist_ok=True)
    try:
        _export_files(case_dir, target, seed, registry, manifest, names, counts, errors)
    except KeyboardInterrupt:  # what was written stands, and says it is not the whole
        _write_manifest(target, seed, manifest, interrupted=True)
        raise
    _write_manifest(target, seed, manifest, interrupted=False)
    return counts, errors


def _write_manifest(target: Path, seed: int, manifest: list[dict], interrupted: bool) -> None:
    document = {"seed": seed, "interrupted": interrupted, "tests": manifest}
    write_atomically(target / "manifest.json", json.dumps(document, indent=1))


def _export_files(case_dir: Path, target: Path, seed: int, registry: dict[str, Ambiguity], manifest: list[dict],
                  names: set[str], counts: dict[str, int], errors: list[str]) -> None:
    for file in case_files(case_dir):
        try:
            items = [item for case in load_case_file(file, registry) for item in expand(case)]
        except CaseError as e:
            errors.append(str(e))
            continue
        for item in items:
            case = item.case
            written = item.case_inputs(seed)
            inputs = item.to_model(written)
            kind, note = _kind(item, written, registry)
            name = _test_name(item.id, names)
            try:
                item.model
                _write(target / kind / name, item, inputs, None if kind == "must_reject" else expected_outputs(item, inputs))
            except CaseError as e:  # a model onnx.checker refuses
                errors.append(str(e))
                continue
            manifest.append({"test": f"{kind}/{name}", "id": item.id, "kind": kind, "expected": item.expectation,
                             "case": f"{case.file.name}:{case.line}", "op": case.op, "version": item.version,
                             "note": note})
            counts[kind] = counts.get(kind, 0) + 1


def _kind(item: Item, written: dict[str, np.ndarray], registry: dict[str, Ambiguity]) -> tuple[str, str]:
    """(kind, note) from the inputs as the case writes them."""
    if item.case.reject:
        return "must_reject", f"invalid: {item.case.reject}"
    open_ones = [key for key in detected(item, written, registry) if registry[key].status == "open"]
    if open_ones:
        return "open_questions", "open: " + ", ".join(open_ones) + " (outputs: the reference backend's reading)"
    if any(o.positions_of for o in item.outputs) and _has_ties(item, written[item.inputs[0].name]):
        return "index_ties", "a window has several maxima: any of their indices is right"
    return "judged", ""


def _has_ties(item: Item, x: np.ndarray) -> bool:
    """Whether some window of the MaxPool holds its maximum more than once."""
    axes = node_axes(item.case.domain, item.case.attributes, x.shape[2:])
    if any(ax.out == 0 for ax in axes):  # no window at all (and a slice would wrap around)
        return False
    padded = x.astype(np.float64)
    widths = [(0, 0), (0, 0)] + [(ax.pad_begin, ax.pad_end + ax.end_overhang) for ax in axes]
    padded = np.pad(padded, widths, constant_values=np.nan)  # padding never equals a maximum
    windows = []
    for offsets in np.ndindex(*[ax.kernel for ax in axes]):
        view = (slice(None), slice(None)) + tuple(
            slice(j * ax.dilation, j * ax.dilation + (ax.out - 1) * ax.stride + 1, ax.stride)
            for j, ax in zip(offsets, axes))
        windows.append(padded[view])
    if not windows or windows[0].size == 0:
        return False
    stacked = np.stack(windows)
    maximum = np.where(np.isnan(stacked), -np.inf, stacked).max(axis=0)
    return bool((stacked == maximum).sum(axis=0).max() > 1)


def _test_name(item_id: str, taken: set[str]) -> str:
    name = "test_" + re.sub(r"[^A-Za-z0-9_]", "_", item_id.replace("/", "__").replace("[", "__").rstrip("]"))
    if len(name) > MAX_NAME:  # a long parameter label: its start, and a hash of the whole id
        name = name[:MAX_NAME - HASH_CHARS - 1] + "_" + hashlib.sha256(item_id.encode()).hexdigest()[:HASH_CHARS]
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _write(directory: Path, item: Item, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray] | None) -> None:
    """One test, built beside its place and renamed into it: an interrupt never leaves a test
    whose expected outputs are missing (a runner would find nothing to compare and pass it)."""
    building = directory.with_name(f".{directory.name}.partial")
    shutil.rmtree(building, ignore_errors=True)
    try:
        data = building / "test_data_set_0"
        data.mkdir(parents=True)
        onnx.save(item.model, building / "model.onnx")
        (building / "data.json").write_text(json.dumps({"rtol": 0, "atol": 0}))
        for index, port in enumerate(item.inputs):
            (data / f"input_{index}.pb").write_bytes(_tensor(port.name, port.dtype.onnx, inputs[port.name]))
        expected = outputs if outputs is not None else {}
        for index, output in enumerate(item.outputs if outputs is not None else ()):
            (data / f"output_{index}.pb").write_bytes(_tensor(output.name, output.dtype.onnx, expected[output.name]))
        shutil.rmtree(directory, ignore_errors=True)  # an earlier export's test of the same name
        os.replace(building, directory)
    finally:
        shutil.rmtree(building, ignore_errors=True)  # a Ctrl-C midway leaves no half-built test


def _tensor(name: str, element_type: int, array: np.ndarray) -> bytes:
    """A TensorProto from raw bytes: exact for every element type, bfloat16 included."""
    array = np.ascontiguousarray(array)
    proto = helper.make_tensor(name, element_type, array.shape, array.tobytes(), raw=True)
    return proto.SerializeToString()

"""OpenVINO's failing items attributed by the evidence in their own outputs, not by the suite's
defect models: an element whose wrong value only one mechanism gives. Each mechanism was checked
by hand on OpenVINO's source: max_pool.hpp's seed (the lowest value, its index 0) and its `>`, the
CPU plugin's inference precisions (float64 in float32 with saturation, int64 as int32, int32
through float32 clamped at 2^31 - 128), bfloat16 and float32 denormals. An item without such an
element keeps the cause its entry in expectations/openvino.yaml names (which names one per case).

    python -m bench.openvino_evidence RESULTS.json CAUSES.json
    python -m bench.diagnosis_trial RESULTS.json CAUSES.json

Each failed MaxPool item is run again on OpenVINO (results.json holds no outputs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
from onnx import helper

from conformance.backends import load_backend
from conformance.judge.expectations import load_expectations
from conformance.judge.oracle import consult
from conformance.semantics import node_axes
from tests.support.bundled import bundled_items, bundled_registry

FLT_MAX = float(np.finfo(np.float32).max)
EXPECTATIONS = Path(__file__).resolve().parents[1] / "expectations" / "openvino.yaml"


def _through_float32(values: np.ndarray) -> np.ndarray:
    """int32 through float32 and back, clamped as OpenVINO converts (2^31 - 128 at the top)."""
    return np.clip(values.astype(np.float32).astype(np.float64), -2.0**31, 2147483520.0)


def shown_by_values(dtype: np.dtype, expected: np.ndarray, got: np.ndarray) -> set[str]:
    """The mechanisms whose signature a wrong element of Y shows."""
    e, g = expected.astype(np.float64), got.astype(np.float64)
    wrong = ~((e == g) | (np.isnan(e) & np.isnan(g)))
    found = set()
    if (wrong & np.isnan(e)).any():
        found.add("nan-windows")
    if dtype == np.float64:
        saturated = np.clip(e, -FLT_MAX, FLT_MAX).astype(np.float32).astype(np.float64)
        if (wrong & (g == saturated)).any():  # -inf too: clamped before the kernel
            found.add("float64_through_float32")
    elif dtype in (np.float32, ml_dtypes.bfloat16, np.float16):
        if dtype == np.float16 and (wrong & np.isnan(e) & np.isneginf(g)).any():
            found.add("finite_value_for_minus_inf")  # float32's seed, cast back to float16: -inf
        if dtype != np.float16 and (wrong & np.isneginf(e) & (g == -FLT_MAX)).any():
            found.add("finite_value_for_minus_inf")
        tiny = float(ml_dtypes.finfo(dtype).smallest_normal)
        if (wrong & (e != 0) & (np.abs(e) < tiny) & (g == 0)).any():
            found.add("subnormals_flushed")
    if dtype == np.int64:
        with np.errstate(invalid="ignore"):
            wrapped = ((e.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.float64)
        if (wrong & (g == wrapped)).any():
            found.add("int64_through_int32")
        if (wrong & (g == _through_float32(wrapped)) & (g != wrapped)).any():
            found.add("int32_through_float32")
    if dtype == np.int32 and (wrong & (g == _through_float32(e))).any():
        found.add("int32_through_float32")
    return found


def seed_index_shown(x: np.ndarray, axes, expected_y: np.ndarray, expected_i: np.ndarray, got_i: np.ndarray) -> bool:
    """Whether an index is the seed's (max_elem_idx = 0 before the loop: its plane's first element)
    where that element is not its window's maximum or lies outside the window."""
    plane = int(np.prod(x.shape[2:]))
    origin = np.broadcast_to(np.arange(expected_y.shape[0] * expected_y.shape[1]).reshape(
        expected_y.shape[:2] + (1,) * (expected_y.ndim - 2)) * plane, expected_y.shape)
    flat = x.astype(np.float64).reshape(-1)
    pointed = flat[np.clip(got_i, 0, flat.size - 1)]
    e = expected_y.astype(np.float64)
    inside = np.ones(expected_y.shape[2:], dtype=bool)
    for k, a in enumerate(axes):
        holds_first = np.array([0 in a.positions(q) for q in range(a.out)], dtype=bool)
        inside &= holds_first.reshape([-1 if i == k else 1 for i in range(len(axes))])
    maximum = (pointed == e) | (np.isnan(pointed) & np.isnan(e))
    return bool(((got_i == origin) & (got_i != expected_i) & ~(maximum & np.broadcast_to(inside, e.shape))).any())


def attribute(results: Path) -> dict[str, list[str] | str]:
    document = json.loads(results.read_text())
    details = next((b.get("details", {}) for b in document["environment"]["backends"] if b["name"] == "openvino"), {})
    listed = load_expectations(EXPECTATIONS, "openvino", details=details)
    items, registry, backend = {i.id: i for i in bundled_items()}, bundled_registry(), load_backend("openvino")
    causes: dict[str, list[str] | str] = {}
    for record in document["items"]:
        if record["backend"] != "openvino" or record["outcome"] not in ("fail", "error", "crash", "timeout"):
            continue
        entry = listed.find(record["id"])
        causes[record["id"]] = entry.cause if entry and entry.cause else "-"
        if record["outcome"] != "fail" or record["op"] == "MaxUnpool" or record.get("expected") == "reject":
            continue
        item = items[record["id"]]
        oracle = consult(item, 0, registry)
        inputs = item.to_model(oracle.written)
        got = backend.run(oracle.model, inputs)
        x = np.asarray(next(iter(inputs.values())))
        names = [o.name for o in item.outputs]
        expected_y, got_y = np.asarray(oracle.expected[names[0]]), np.asarray(got[0])
        found = shown_by_values(x.dtype, expected_y, got_y) if expected_y.shape == got_y.shape else set()
        if len(names) > 1 and x.ndim >= 3 and np.shape(got[1]) == expected_y.shape:
            node = oracle.model.graph.node[0]
            attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            axes = node_axes(node.domain or "ai.onnx", attributes, x.shape[2:])
            if seed_index_shown(x, axes, expected_y, np.asarray(oracle.expected[names[1]]), np.asarray(got[1])):
                found.add("finite_value_for_minus_inf")
        if found:
            causes[record["id"]] = sorted(found)
    return causes


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(attribute(Path(sys.argv[1]))))

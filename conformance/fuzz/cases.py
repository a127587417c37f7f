"""A drawn configuration as a case of ``cases.schema.json`` (literal inputs, derived outputs) and as
the item the suite's own expansion makes of it, so that the fuzz judges exactly as the suite does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..semantics import GeometryError, pool_axes, unpool_shape

from ..load.cases import Ambiguity, Source, build_case
from ..load.limits import DEFAULT_LIMITS
from ..expand.items import Item, expand
from ..load.operators import operators
from .space import fill

FUZZ_FILE = Path("fuzz.yaml")


class NotDrawable(Exception):
    """The recipe makes no model (its indices do not fit the output): the draw is discarded."""


def as_input(array: np.ndarray, dtype: str) -> dict[str, Any]:
    """An input of a case: literal data, or for an empty tensor (whose data has no shape) its shape."""
    if array.size == 0:
        return {"dtype": dtype, "random": {"shape": list(array.shape), "distribution": "lowest"}}
    return {"dtype": dtype, "data": literal(array)}


def literal(array: np.ndarray) -> list:
    """An array as YAML-ready nested lists: integers exact, floats as the doubles they equal."""
    if np.issubdtype(array.dtype, np.integer):
        return array.tolist()
    return array.astype(np.float64).tolist()


def materialize(config: dict[str, Any], name: str = "fuzz", description: str | None = None,
                generated: str | None = None) -> dict[str, Any]:
    """The case (a template of cases.schema.json) that ``config`` describes."""
    target, dtype, shape = config["target"], config["dtype"], tuple(config["shape"])
    attributes = config["attributes"]
    raw: dict[str, Any] = {
        "name": name,
        "description": description or f"a configuration drawn by conformance fuzz for {target.label}",
        "provenance": {"generated": generated or "drawn by conformance fuzz; expected outputs derived by the reference"},
        "versions": [target.version],
        "attributes": dict(attributes),
    }
    if config.get("input_shapes", "declared") != "declared":
        raw["input_shapes"] = config["input_shapes"]
    # a probe of an item keeps the item's own values (explain/factors.py); a drawn one, its recipe's
    x = config["data"] if config.get("data") is not None else fill(config["filling"], dtype, shape)
    if target.op == "MaxUnpool":
        _unpool_inputs(config, raw, x)
    else:
        raw["inputs"] = {"X": as_input(x, dtype)}
    if config.get("reject"):
        raw["reject"] = config["reject"]
        raw["outputs"] = list(config["outputs"])
    else:
        raw["outputs"] = {name: "derived" for name in config["outputs"]}
    return raw


def _unpool_inputs(config: dict[str, Any], raw: dict[str, Any], x: np.ndarray) -> None:
    attributes = config.get("geometry", config["attributes"])  # a broken model keeps its drawn geometry
    kernel, strides, pads = attributes["kernel_shape"], attributes.get("strides"), attributes.get("pads")
    dtype = config["dtype"]
    if config["form"] == "round_trip" and not config.get("reject"):
        try:
            axes = pool_axes(x.shape[2:], kernel, strides, pads, None, "NOTSET", 0)
        except GeometryError as e:
            raise NotDrawable(str(e)) from None
        pooled = x.shape[:2] + tuple(a.out for a in axes)
        raw["upstream"] = {"op": "MaxPool", "attributes": dict(config["attributes"]),
                           "inputs": {"X": as_input(x, dtype)},
                           "feeds": {"Y": "X", "Indices": "I"}}
    else:
        pooled = x.shape
        try:
            shape = unpool_shape(pooled, kernel, strides, pads)
        except GeometryError as e:
            raise NotDrawable(str(e)) from None
        per_plane, window_count = int(np.prod(shape[2:])), int(np.prod(pooled[2:]))
        if window_count > per_plane:
            raise NotDrawable("more pooled values than output positions")
        rng = np.random.default_rng(config["filling"]["seed"] + 1)
        planes = int(np.prod(pooled[:2]))
        indices = np.array([rng.permutation(per_plane)[:window_count] + p * per_plane for p in range(planes)],
                           dtype=np.int64).reshape(pooled)
        raw["inputs"] = {"X": as_input(x, dtype), "I": as_input(indices, "int64")}
    growth = config.get("output_shape_growth")
    if config.get("reject"):
        return
    try:
        default = unpool_shape(pooled, kernel, strides, pads)
    except GeometryError as e:
        raise NotDrawable(str(e)) from None
    # A round trip whose default shape differs from its input's gets that shape back through
    # output_shape, as the document's example does; indices would otherwise fall outside.
    base = x.shape if "upstream" in raw and tuple(default) != x.shape else default
    if growth is not None or base is not default:
        requested = list(base[:2]) + [d + g for d, g in zip(base[2:], growth or [0] * len(base[2:]))]
        raw.setdefault("inputs", {})["output_shape"] = {"dtype": "int64", "data": requested}


def file_document(target_domain: str, op: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {"op": op}
    if target_domain != "ai.onnx":
        document["domain"] = target_domain
    document["cases"] = cases
    return document


def build_item(config: dict[str, Any], registry: dict[str, Ambiguity], name: str = "fuzz") -> Item:
    """The item the suite makes of ``config``'s case (CaseError: the expansion refuses it)."""
    target = config["target"]
    raw = materialize(config, name)
    operator = operators()[target.domain, target.op]
    source = Source(FUZZ_FILE, file_document(target.domain, target.op, [raw]), {})
    case = build_case(source, ("cases", 0), name, raw, operator, registry, DEFAULT_LIMITS)
    (item,) = expand(case)
    return item


def input_arrays(item: Item) -> dict[str, np.ndarray]:
    """The item's inputs as its model takes them."""
    return item.make_inputs(0)


"""The depth axes of coverage: which edge value of each element type some item's expected output
holds (answer values), which geometry attribute each operator gets at each spatial rank (rank
geometry), and which degenerate extent each operator version gets, with and without Indices
(degenerate extents). Each table's cells are counts of items; a cell without items must give its
reason in ``path_selectors.yaml`` (``axes``), and a reason for a cell that has items is stale.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

from ..expand.items import Item, load_items
from ..load import value_classes
from ..load.cases import load_registry
from ..load.operators import operators
from ..expand.selectors import QUESTION_COLUMNS, RANKS, attributes_of, question_columns, rank_of
from .coverage import selectors_data

GEOMETRY = ("pads", "auto_pad", "ceil", "dilation", "stride")
EXTENTS = ("zero_n", "zero_c", "zero_spatial", "one_element")


def _operator(domain: str, op: str) -> str:
    return op if domain == "ai.onnx" else f"{domain}.{op}"


def geometry_of(item: Item) -> set[str]:
    """The geometry attributes ``item`` sets to something other than their default."""
    a = attributes_of(item)
    pads = list(a.get("pads", [])) + list(a.get("pads_begin", [])) + list(a.get("pads_end", []))
    found = {name for name, holds in (
        ("pads", any(pads) and a.get("auto_pad", "NOTSET") in ("NOTSET", "explicit")),
        ("auto_pad", a.get("auto_pad", "NOTSET") not in ("NOTSET", "explicit")),
        ("ceil", a.get("ceil_mode") == 1 or a.get("rounding_type") in ("ceil", "ceil_torch")),
        ("dilation", any(d > 1 for d in a.get("dilations", []))),
        ("stride", any(s > 1 for s in a.get("strides", [])))) if holds}
    return found


def extents_of(item: Item) -> set[str]:
    shape = item.inputs[0].spec.shape  # channels-first, as the case writes it
    found = set()
    if shape[0] == 0:
        found.add("zero_n")
    if len(shape) > 1 and shape[1] == 0:
        found.add("zero_c")
    if any(s == 0 for s in shape[2:]):
        found.add("zero_spatial")
    if all(s == 1 for s in shape):
        found.add("one_element")
    return found


def _indices_column(item: Item) -> str:
    return "Indices" if item.case.op == "MaxUnpool" or any(o.positions_of for o in item.outputs) else "Y"


def _rows_by_operator() -> dict[str, list]:
    return {_operator(d, op): list(operator.versions.values()) for (d, op), operator in operators().items()}


def _has_indices(signature) -> bool:
    return signature.op == "MaxUnpool" or any(p.positions_of for p in signature.outputs)


def _value_port_types(signature) -> tuple[str, ...]:
    return signature.types[signature.inputs[0].type]


def answer_values(case_dir: Path, items: list[Item]) -> dict[str, dict[str, int | None]]:
    """"operator [dtype]" -> value class -> items whose expected values hold it (None: the type
    has no value of the class). Only the cases the axis lists are derived (it runs the reference)."""
    from ..judge.verdict import expected_outputs

    wanted = {tuple(ref.split(":")) for ref in selectors_data()["axes"]["answer_values"]["cases"]}
    table: dict[str, dict[str, Any]] = {}  # a count, or None where the type has no such value
    for name, signatures in _rows_by_operator().items():
        for dtype in sorted({t for s in signatures for t in _value_port_types(s)}):
            have = value_classes.classes_of(dtype)
            table[f"{name} [{dtype}]"] = {c: (0 if c in have else None) for c in value_classes.CLASSES}
    labels: dict[str, Counter] = defaultdict(Counter)
    for item in items:
        if (item.case.file.name, item.case.name.split("/")[0]) not in wanted or item.case.reject:
            continue
        expected = expected_outputs(item, item.to_model(item.case_inputs(0)))
        found = set().union(*(value_classes.found(expected[o.name], item.dtype)
                              for o in item.outputs if not o.positions_of))
        row = f"{_operator(item.case.domain, item.case.op)} [{item.dtype}]"
        labels[row].update(found)
    for row, counts in labels.items():
        for label, _ in value_classes.edge_values(row.split("[")[1][:-1]):
            column = value_classes.column(label)
            # the sibling column counts its rarest label: every value a sibling cannot hold must show
            now = table[row][column]  # a count here: the loop visits the type's own values
            table[row][column] = counts[label] if column != "sibling" or now == 0 else min(now, counts[label])
        if table[row][value_classes.NAN] is not None:
            table[row][value_classes.NAN] = counts[value_classes.NAN]
    return table


# The attributes that express each geometry column, in either dialect.
GEOMETRY_ATTRIBUTES = {"pads": ("pads", "pads_begin"), "auto_pad": ("auto_pad",), "ceil": ("ceil_mode", "rounding_type"),
                       "dilation": ("dilations",), "stride": ("strides",)}


def rank_geometry(items: list[Item]) -> dict[str, dict[str, int | None]]:
    """"operator rank" -> geometry attribute -> valid items that set it; None where no version of
    the operator has the attribute."""
    table: dict[str, dict[str, Any]] = {}  # a count, or None where the version has no such output
    for name, signatures in _rows_by_operator().items():
        has = set().union(*(s.attributes for s in signatures))
        for rank in RANKS:
            table[f"{name} {rank}"] = {g: 0 if has & set(GEOMETRY_ATTRIBUTES[g]) else None for g in GEOMETRY}
    for item in items:
        if item.case.reject or item.inputs[0].spec.shape is None:
            continue
        row = f"{_operator(item.case.domain, item.case.op)} {rank_of(item)}"
        for g in geometry_of(item):
            if table[row][g] is not None:
                table[row][g] += 1
    return table


def degenerate_extents(items: list[Item]) -> dict[str, dict[str, int | None]]:
    """"operator-version" -> "extent Y|Indices" -> items (must-reject ones included); None where
    the version has no such output."""
    table: dict[str, dict[str, Any]] = {}  # a count, or None where the version has no such output
    for name, signatures in _rows_by_operator().items():
        for s in signatures:
            kinds = ("Indices",) if s.op == "MaxUnpool" else ("Y", "Indices") if _has_indices(s) else ("Y",)
            table[f"{name}-{s.version}"] = {f"{e} {k}": (0 if k in kinds else None)
                                            for e in EXTENTS for k in ("Y", "Indices")}
    for item in items:
        if item.inputs[0].spec.shape is None:
            continue
        row = table[f"{_operator(item.case.domain, item.case.op)}-{item.version}"]
        for extent in extents_of(item):
            key = f"{extent} {_indices_column(item)}"
            if row.get(key) is not None:
                row[key] += 1
    return table


def open_questions(items: list[Item], registry: dict) -> dict[str, dict[str, int]]:
    """Open question x path selector value: items that run into the question (its readings give
    different answers there), every case."""
    from ..judge.ambiguities import detected

    columns = [f"{name} {value}" for name, values in QUESTION_COLUMNS for value in values]
    table = {key: {c: 0 for c in columns} for key, entry in registry.items() if entry.status == "open"}
    for item in items:
        if item.case.reject or item.inputs[0].spec.shape is None:
            continue
        for key in set(detected(item, item.case_inputs(0), registry)) & set(table):  # a case may tag a settled one
            for column in question_columns(item):
                table[key][column] += 1
    return table


@cache
def tables(case_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    registry = load_registry(case_dir)
    items = load_items(case_dir, registry)
    return {"open_questions": open_questions(items, registry), "answer_values": answer_values(case_dir, items),
            "rank_geometry": rank_geometry(items), "degenerate_extents": degenerate_extents(items)}


def problems(found: dict[str, dict[str, dict[str, int | None]]]) -> list[str]:
    """Empty cells without a reason, and reasons given for cells that have items."""
    out = []
    for axis, table in found.items():
        reasons = selectors_data()["axes"][axis].get("not_covered") or {}
        for row, cells in table.items():
            for column, count in cells.items():
                reason = _reason(reasons, row, column)
                if count == 0 and not reason:
                    out.append(f"{axis}: {row} x {column}: no item and no reason in axes.{axis}.not_covered")
                if count and reason and _reason(reasons, row, column, wildcard=False):
                    out.append(f"{axis}: {row} x {column}: has {count} items, but not_covered gives a reason")
    return out


def _reason(reasons: dict, row: str, column: str, wildcard: bool = True) -> str | None:
    """A reason for the row and column: a key names one column, several (comma-separated), or
    every empty column of the row (`*`)."""
    for key, reason in (reasons.get(row) or {}).items():
        if (wildcard and key == "*") or column in (k.strip() for k in key.split(",")):
            return reason
    return None


def render(case_dir: Path) -> str:
    found = tables(case_dir)
    lines = []
    for axis, table in found.items():
        spec = selectors_data()["axes"][axis]
        reasons = spec.get("not_covered") or {}
        columns = list(next(iter(table.values())))
        lines += [f"**{axis}**: {spec['description']}", "",
                  "| | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
        explained: dict[tuple[str, str], list[str]] = defaultdict(list)  # (row, reason) -> its columns
        for row, cells in table.items():
            texts = []
            for column, count in cells.items():
                if count is None:
                    texts.append("·")
                elif count:
                    texts.append(str(count))
                else:
                    texts.append("0 *")
                    explained[row, _reason(reasons, row, column) or "NO REASON"].append(column)
            lines.append(f"| {row} | " + " | ".join(texts) + " |")
        lines += ["", "· the operator or type has no such cell." + (" \\* no item:" if explained else ""), ""]
        lines += [f"- {row} x {', '.join(columns)}: {reason}" for (row, reason), columns in explained.items()]
        lines += [""] if explained else []
    return "\n".join(lines)

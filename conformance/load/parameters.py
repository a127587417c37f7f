"""Parameterised cases: one case in YAML, many concrete cases after substitution.

A case with ``parameters: {design, values}`` expands into one instance per row of its design.
In each instance, a string ``$name`` (or ``$name.key`` for a mapping value) anywhere in the case
is replaced by the parameter's value, and a list element ``$name...`` by the elements of a list
value; a field that becomes null is left out. Instances are named
``<case>/<label>-<label>...``: a mapping value's ``label``, or the parameter's name followed by
its value. The designs are deterministic, so ids are stable from run to run.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from typing import Any, Callable

from .limits import DEFAULT_LIMITS, Limits

LABEL = re.compile(r"^[A-Za-z0-9_.+-]+$")


class ParameterError(ValueError):
    def __init__(self, path: tuple, message: str):
        super().__init__(message)
        self.path = path


def instances(raw: dict, limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, dict]]:
    """(name, case without ``parameters``) for each row of the case's design."""
    spec = raw.get("parameters")
    if spec is None:
        return [(raw["name"], raw)]
    names = list(spec["values"])
    values = [spec["values"][name] for name in names]
    for name, options in zip(names, values):
        _check_options(name, options)
    design = pairwise if spec.get("design") == "pairwise" else product
    template = {key: value for key, value in raw.items() if key != "parameters"}
    _check_rows(spec, [len(options) for options in values], limits)
    found: list[tuple[str, dict]] = []
    nodes = 0
    for row in design([len(options) for options in values]):
        chosen = {name: options[index] for name, options, index in zip(names, values, row)}
        keys = {name: _keys(options) for name, options in zip(names, values)}
        label = "-".join(_label(name, value) for name, value in chosen.items())
        case = _substitute(template, lambda ref, path: _lookup(ref, path, chosen, keys), ())
        nodes += _nodes(case)
        if nodes > limits.instance_nodes:
            raise ParameterError(("parameters",), limits.exceeded(
                "instance_nodes", nodes, f"YAML nodes in the first {len(found) + 1:,} instances"))
        found.append((f"{raw['name']}/{label}", case))
    return found


def product(sizes: list[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(size) for size in sizes)))


def pairwise(sizes: list[int]) -> list[tuple[int, ...]]:
    """Rows covering every pair of values of any two parameters, by in-parameter-order growth
    (IPOG): each new parameter first extends the existing rows greedily, then rows are added for
    the pairs still uncovered. Ties go to the lowest index, so the design is deterministic."""
    if len(sizes) < 3:
        return product(sizes)
    rows: list[list[int | None]] = [list(row) for row in product(sizes[:2])]
    for p in range(2, len(sizes)):
        uncovered = {(q, a, b) for q in range(p) for a in range(sizes[q]) for b in range(sizes[p])}
        for row in rows:
            def gain(b: int) -> int:
                return sum((q, row[q], b) in uncovered for q in range(p) if row[q] is not None)
            best = max(range(sizes[p]), key=lambda b: (gain(b), -b))
            row.append(best)
            uncovered -= {(q, row[q], best) for q in range(p)}
        added: list[list[int | None]] = []
        for q, a, b in sorted(uncovered):
            for row in added:
                if row[p] == b and row[q] is None:
                    row[q] = a
                    break
            else:
                row = [None] * (p + 1)
                row[q], row[p] = a, b
                added.append(row)
        rows += added
    return [tuple(0 if v is None else v for v in row) for row in rows]


def _check_rows(spec: dict, sizes: list[int], limits: Limits) -> None:
    """Refuse a design too large to expand, before expanding it. Pairwise: the value pairs to
    cover bound its rows from above and its cost (IPOG) from below."""
    if spec.get("design") == "pairwise" and len(sizes) >= 3:
        rows = sum(a * b for a, b in itertools.combinations(sizes, 2))
        what = "value pairs to cover (pairwise design)"
    else:
        rows, what = math.prod(sizes), "instances (product of the parameters' value counts)"
    if rows > limits.instances:
        raise ParameterError(("parameters",), limits.exceeded("instances", rows, what))


def _nodes(value: Any) -> int:
    """The nodes of a YAML value (its aliases were bounded when the file was read)."""
    if isinstance(value, dict):
        return 1 + sum(_nodes(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_nodes(v) for v in value)
    return 1


def _check_options(name: str, options: list) -> None:
    labels = [_label(name, value) for value in options]
    for index, (value, label) in enumerate(zip(options, labels)):
        if isinstance(value, dict) and "label" not in value:
            raise ParameterError(("parameters", "values", name, index), "a mapping value needs a `label`")
        if not LABEL.match(label):
            raise ParameterError(("parameters", "values", name, index),
                                 f"label {label!r} may hold only letters, digits and _ . + -")
    if len(set(labels)) != len(labels):
        raise ParameterError(("parameters", "values", name), f"two values of {name} have the same label")


def _label(name: str, value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("label"))
    if value is None:
        return f"no_{name}"
    if isinstance(value, list):
        return name + "x".join(str(v) for v in value)
    return f"{name}{value}"


def _keys(options: list) -> set[str]:
    return {key for value in options if isinstance(value, dict) for key in value}


def _lookup(ref: str, path: tuple, chosen: dict, keys: dict) -> Any:
    name, _, key = ref.partition(".")
    if name not in chosen:
        raise ParameterError(path, f"${ref}: no parameter {name!r} (parameters: {', '.join(chosen)})")
    value = chosen[name]
    if not key:
        return {k: v for k, v in value.items() if k != "label"} if isinstance(value, dict) else value
    if key not in keys[name]:
        raise ParameterError(path, f"${ref}: no value of {name} has the field {key!r}")
    return value.get(key)  # a mapping that omits the field leaves it out


def _substitute(node: Any, lookup: Callable[[str, tuple], Any], path: tuple) -> Any:
    if isinstance(node, str) and node.startswith("$"):
        return copy.deepcopy(lookup(node[1:], path))
    if isinstance(node, dict):
        result = {}
        for key, value in node.items():
            value = _substitute(value, lookup, path + (key,))
            if value is not None:
                result[key] = value
        return result
    if isinstance(node, list):
        items = []
        for i, value in enumerate(node):
            if isinstance(value, str) and value.startswith("$") and value.endswith("..."):
                spliced = lookup(value[1:-3], path + (i,))
                if not isinstance(spliced, list):
                    raise ParameterError(path + (i,), f"{value}: only a list can be spliced")
                items += copy.deepcopy(spliced)
            else:
                items.append(_substitute(value, lookup, path + (i,)))
        if any(item is None for item in items):
            raise ParameterError(path, "a list element became null")
        return items
    return node

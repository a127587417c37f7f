"""What an undiagnosed line's failures depend on: the deciding attributes that split it.

A line that no defect model names holds every failing item whose runtime said the same (a signal
without text, the same class of wrong values), and a runtime with several bugs on one path puts
them on one line. The run holds what tells them apart: every other item of the same operators,
with its attributes and what became of it. A *deciding predicate* of a line is one feature of the
items (a path selector, an element type, an attribute left out or set), or two together, such that

- every item of the run that has it is on the line (the items that run it fail this way, all of
  them), and
- each of its features decides: of the items that have the rest of the predicate and not this
  feature (where it is a value of a selector, another value of it), three in four at least are
  not among the line's items that no larger part took (so that "SIGFPE where strides are left out"
  is not cut into "... and padding at the end" and the rest, when padding makes no difference).

The line is split where such predicates hold a tenth of it or more (and ten items at least), the
largest first (a predicate that holds the whole line names it: "crash: SIGFPE where stride >1");
what none holds keeps the line's own name (and where that is fewer than ten items,
the line stays whole: a split would leave them a line of their own). A split says only what the run shows: the items that have the
predicate fail the same way; it names no cause.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Iterable

from ..semantics import GeometryError, node_axes
from .record import ItemRecord

SHARE, FEWEST = 0.1, 10  # the least part of a line, and the fewest items, a predicate must hold to split it off
ON_THE_LINE = 0.25  # for each of a predicate's features: at most this part of the items without it, but with the rest, on the line
# Lines below this are left whole, named by no predicate: below twice FEWEST a line holds one part
# at most (a rest under FEWEST is folded back), and a predicate that every item of so few shares
# is weak evidence of what decides (a few items share many attributes by chance).
SMALLEST_LINE = 20


def features(record: ItemRecord, merging: bool = False) -> frozenset[str]:
    """What an item is, as a line's predicates read it: its path selectors, its element type, and
    the attributes it leaves out or sets to other than their defaults; where refusal lines are
    merged (``merging``), also whether its output is empty past N by the documents, and whether N
    or C is 0 (a line is not split on them: a runtime refuses an empty output for the same reason as
    a kernel it finds too long, and checks N and C together, with a message for each)."""
    attributes = record.get("attributes", {})
    found = set(record.get("path", []))
    found.update(f"type {i['dtype']}" for i in record.get("inputs", [])[:1])
    for i in record.get("inputs", [])[:1]:
        if i["shape"][:1] == [0]:
            found.add("N of 0")
        if 0 in i["shape"][1:]:
            found.add("an extent of 0 past N")
    if merging and _output_is_empty_past_n(record):
        found.add("Y empty past N")
    if merging and _batch_or_channels_empty(record):
        found.add("empty N or C")  # one check of both in a runtime's shape inference, worded per axis
    found.update(f"{name} left out" for name in ("strides", "pads", "dilations") if name not in attributes)
    if isinstance(attributes.get("pads", []), list) and not any(attributes.get("pads", [])):
        found.add("pads all 0")  # left out or written out
    for name in ("ceil_mode", "storage_order"):
        if attributes.get(name):
            found.add(f"{name} {attributes[name]}")
    dilations = attributes.get("dilations")
    if isinstance(dilations, list) and any(d != 1 for d in dilations):
        found.add("dilations >1")
    if attributes.get("auto_pad") not in (None, "", "NOTSET"):
        found.add(f"auto_pad {attributes['auto_pad']}")
    return frozenset(found)


def split(line: list[ItemRecord], population: Iterable[ItemRecord]) -> list[tuple[str | None, list[ItemRecord]]]:
    """``line``'s items by deciding predicate (its text, "rank 4d+ and stride >1"), the largest
    first, then the rest (None); ``population``: every item the backend ran of the line's operators."""
    on_line = {r["id"] for r in line}
    if len(line) < SMALLEST_LINE:
        return [(None, line)]
    having: dict[str, set[str]] = defaultdict(set)
    everyone = set()
    for record in population:
        everyone.add(record["id"])
        for feature in features(record):
            having[feature].add(record["id"])
    shared = sorted({f for r in line for f in features(r)})
    pure: dict[tuple[str, ...], set[str]] = {}
    for size in (1, 2):
        for predicate in itertools.combinations(shared, size):
            holders = set.intersection(*(having[f] for f in predicate))
            if holders and holders <= on_line:
                pure[predicate] = holders
    parts, left = [], set(on_line)
    while True:  # the largest part first; what decides is judged on what the parts before left
        ranked = sorted(pure.items(), key=lambda kv: (-len(kv[1] & left), len(kv[0]), kv[0]))
        chosen = next(((p, h) for p, h in ranked if len(h & left) >= max(SHARE * len(line), FEWEST)
                       and _each_decides(p, having, left, everyone)), None)
        if chosen is None:
            break
        predicate, holders = chosen
        parts.append((" and ".join(predicate), [r for r in line if r["id"] in holders & left]))
        left -= holders
        del pure[predicate]
    if not parts or 0 < len(left) < FEWEST:  # a few items that none holds: no line of their own
        return [(None, line)]
    return parts + ([(None, [r for r in line if r["id"] in left])] if left else [])


def _channels_and_spatial(record: ItemRecord) -> tuple[int, list[int]] | None:
    """The first input's C and spatial extents (C last in the com.* NHWC domains), if it has them."""
    inputs = record.get("inputs", [])
    shape = inputs[0]["shape"] if inputs else []
    if len(shape) < 2:
        return None
    channels_last = record.get("domain", "").startswith("com.")
    return (shape[-1], shape[1:-1]) if channels_last else (shape[1], shape[2:])


def _batch_or_channels_empty(record: ItemRecord) -> bool:
    """Whether the first input has no batch or no channels (the axes no window slides over)."""
    found = _channels_and_spatial(record)
    return found is not None and (record["inputs"][0]["shape"][0] == 0 or found[0] == 0)


def _output_is_empty_past_n(record: ItemRecord) -> bool:
    """Whether a MaxPool's Y has no element by the documents' formulas (default readings) on an
    axis past N: C of 0, or an output axis of 0, from an empty input axis or a kernel longer than
    the padded one (a batch of 0 is left out: runtimes run it as a loop of no iterations)."""
    found = _channels_and_spatial(record)
    if not record.get("op", "").endswith("MaxPool") or found is None:
        return False
    channels, spatial = found
    try:
        return channels == 0 or any(a.out == 0 for a in node_axes(record.get("domain", ""), record.get("attributes", {}),
                                                                 spatial))
    except (GeometryError, KeyError, TypeError, ValueError, IndexError):
        return False


def merge(lines: dict[str, list[ItemRecord]], population: Iterable[ItemRecord]) -> list[tuple[str, list[str]]]:
    """Refusal lines (each of one runtime diagnostic) that one root cause may hold under several
    diagnostics: each group of two lines or more whose items are exactly the run's items with one
    predicate (one feature, or two; ten items at least), so that every item having it is refused, on
    these lines, and nothing else is on them, and each of its features decides against items the run
    shows without it ("Y empty past N": a runtime that words the refusal per rank). Returns
    (predicate, the lines' keys), the largest group first; a line joins one group at most."""
    having: dict[str, set[str]] = defaultdict(set)
    everyone = set()
    for record in population:
        everyone.add(record["id"])
        for feature in features(record, merging=True):
            having[feature].add(record["id"])
    ids = {key: {r["id"] for r in records} for key, records in lines.items()}
    line_of = {i: key for key, found in ids.items() for i in found}
    common = set.union(*(set.intersection(*(set(features(r, merging=True)) for r in records))
                         for records in lines.values() if records)) if lines else set()
    found: list[tuple[tuple[str, ...], list[str]]] = []
    for size in (1, 2):
        for predicate in itertools.combinations(sorted(common), size):
            holders = set.intersection(*(having[f] for f in predicate))
            keys = sorted({line_of[i] for i in holders if i in line_of})
            if (len(holders) >= FEWEST and len(keys) >= 2 and holders == set().union(*(ids[k] for k in keys))
                    and _each_decides(predicate, having, holders, everyone, contrast=True)):
                found.append((predicate, keys))
    groups: list[tuple[str, list[str]]] = []
    taken: set[str] = set()
    for predicate, keys in sorted(found, key=lambda pk: (-sum(len(ids[k]) for k in pk[1]), len(pk[0]), pk[0])):
        if not taken & set(keys):
            groups.append((" and ".join(predicate), keys))
            taken.update(keys)
    return groups


def _each_decides(predicate: tuple[str, ...], having: dict[str, set[str]], on_line: set[str], everyone: set[str],
                  contrast: bool = False) -> bool:
    """Whether the items that have the rest of ``predicate`` but not one of its features (where the
    feature is a value of a selector, those with another value of it) are mostly off the line
    (``contrast``: and there are such items, the run showing what the feature changes)."""
    for feature in predicate:
        rest = [having[f] for f in predicate if f != feature]
        others = (set.intersection(*rest) if rest else set(everyone)) - having[feature]
        siblings = [ids for f, ids in having.items() if f != feature and _selector(f) == _selector(feature)]
        if siblings:
            others &= set().union(*siblings)
        if others and len(others & on_line) > ON_THE_LINE * len(others) or contrast and not others:
            return False
    return True


def _selector(feature: str) -> str:
    """What a feature is a value of: "padding end" of padding, "type int8" of the element type."""
    return feature.split(" ", 1)[0]

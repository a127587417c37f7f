"""Behaviour classes crossed with path selectors: which selector values each class's items reach.

``path_selectors.yaml`` names the selectors (the properties real kernels branch on, with the
source lines that make them one) and the behaviour classes (lists of cases). A cell of the table
lists the values of one selector that the items of one class take, with their item counts; a class
that takes fewer than two values of a selector must say why in ``not_varied``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ..semantics import GeometryError, openvino_axes, pool_axes

from ..expand.items import Item, expand
from ..load.cases import case_files, load_case_file, load_registry

SELECTORS_FILE = Path(__file__).with_name("path_selectors.yaml")
OPENVINO_DOMAIN = "org.openvinotoolkit"
CHANNELS_LAST = ("com.ms.internal.nhwc", "com.microsoft")


@cache
def selectors_data() -> dict:
    return yaml.safe_load(SELECTORS_FILE.read_text())


def _geometry(item: Item) -> tuple[dict, tuple[int, ...]]:
    """The pooling attributes (ONNX names) and the channels-first shape of X."""
    case = item.case
    attributes = case.upstream.attributes if case.upstream else case.attributes
    return attributes, item.inputs[0].spec.shape


def _output_width(item: Item) -> str:
    attributes, shape = _geometry(item)
    try:
        if item.case.domain == OPENVINO_DOMAIN:
            a = attributes
            axes = openvino_axes(shape[2:], a["kernel"], a["strides"], a["pads_begin"], a["pads_end"],
                                 a.get("dilations"), a.get("auto_pad", "explicit"), a.get("rounding_type", "floor"))
        elif item.case.op == "MaxUnpool" and not item.case.upstream:
            return "n/a"
        else:
            axes = pool_axes(shape[2:], attributes["kernel_shape"], attributes.get("strides"), attributes.get("pads"),
                             attributes.get("dilations"), attributes.get("auto_pad", "NOTSET"),
                             attributes.get("ceil_mode", 0))
    except (GeometryError, KeyError):
        return "n/a"
    width = axes[-1].out if axes else 0
    return "0" if width == 0 else ("4k" if width % 4 == 0 else "4k+r")


def _channels(c: int) -> str:
    if c <= 1:
        return str(c)
    if c < 8:
        return "2-7"
    if c % 16 == 0:
        return "16k"
    return "8k" if c % 8 == 0 else "8k+r"


def _padding(item: Item) -> str:
    a, shape = _geometry(item)
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "explicit"):
        return "auto_pad"
    rank = len(shape) - 2
    if "pads_begin" in a:
        begin, end = list(a["pads_begin"]), list(a["pads_end"])
    else:
        pads = list(a.get("pads", [0] * 2 * rank))
        begin, end = pads[:rank], pads[rank:]
    return {(False, False): "none", (True, False): "begin", (False, True): "end", (True, True): "both"}[
        (any(begin), any(end))]


def selector_values(item: Item) -> dict[str, str]:
    a, shape = _geometry(item)
    kernel = list(a.get("kernel_shape", a.get("kernel", [])))
    taps = 1
    for k in kernel:
        taps *= k
    strides = list(a.get("strides", [])) or [1]
    dilations = list(a.get("dilations", [])) or [1]
    rank = len(shape) - 2
    outputs = {o.name for o in item.outputs}
    ceil = a.get("ceil_mode", 0) == 1 or a.get("rounding_type") in ("ceil", "ceil_torch")
    return {
        "rank": f"{rank}d" if rank < 4 else "4d+",
        "indices": "input" if item.case.op == "MaxUnpool" else ("with" if "Indices" in outputs else "without"),
        "stride": str(min(max(strides), 3)) + ("+" if max(strides) >= 3 else ""),
        "padding": _padding(item),
        "element_type": item.dtype,
        "batch": "0" if shape[0] == 0 else ("1" if shape[0] == 1 else "2+"),
        "channels": _channels(shape[1]),
        "kernel_taps": ">32 axis" if any(k > 32 for k in kernel) else ("10+" if taps > 9 else "<=9"),
        "output_width": _output_width(item),
        "dilation": ">1" if max(dilations) > 1 else "1",
        "layout": "channels_last" if item.case.domain in CHANNELS_LAST else "channels_first",
        "ceil_mode": "ceil" if ceil else "floor",
    }


def class_items(case_dir: Path) -> dict[str, list[Item]]:
    """The items of each behaviour class, from the case files of ``case_dir``."""
    wanted = defaultdict(list)
    for name, spec in selectors_data()["classes"].items():
        for ref in spec["cases"]:
            file, _, case = ref.partition(":")
            wanted[file, case].append(name)
    registry = load_registry(case_dir)
    found: dict[str, list[Item]] = {name: [] for name in selectors_data()["classes"]}
    for file in case_files(case_dir):
        for case in load_case_file(file, registry):
            for name in wanted.get((file.name, case.name.split("/")[0]), ()):
                found[name] += [item for item in expand(case) if not item.case.reject]
    return found


def crossing(case_dir: Path) -> dict[str, dict[str, Counter]]:
    """class -> selector -> Counter of selector values over the class's items."""
    table = {}
    for name, items in class_items(case_dir).items():
        cells: dict[str, Counter] = defaultdict(Counter)
        for item in items:
            for selector, value in selector_values(item).items():
                cells[selector][value] += 1
        table[name] = cells
    return table


def problems(table: dict[str, dict[str, Counter]]) -> list[str]:
    """Cells that vary less than two values without a reason, and reasons for cells that vary."""
    reasons = selectors_data()["not_varied"]
    found = []
    for name, cells in table.items():
        for selector in selectors_data()["selectors"]:
            varied = len(cells.get(selector, ())) >= 2
            reason = reasons.get(name, {}).get(selector)
            if not varied and not reason:
                found.append(f"{name} x {selector}: one value only ({', '.join(cells.get(selector, {})) or 'no items'}) and no reason in not_varied")
            if varied and reason:
                found.append(f"{name} x {selector}: varies, but not_varied gives a reason")
    return found


def render(case_dir: Path) -> str:
    """The crossing table as Markdown: one row per class, one column per selector."""
    table = crossing(case_dir)
    selectors = list(selectors_data()["selectors"])
    reasons = selectors_data()["not_varied"]
    covered = sum(len(cells.get(s, ())) >= 2 for cells in table.values() for s in selectors)
    lines = [
        f"{covered} of {len(table) * len(selectors)} cells (behaviour class x path selector) vary the selector; "
        "each other cell gives its reason below the table. A cell lists the selector's values the class's "
        "items take, with item counts (divergent items included).",
        "",
        "| class (items) | " + " | ".join(selectors) + " |",
        "|---|" + "---|" * len(selectors),
    ]
    for name, cells in table.items():
        total = sum(next(iter(cells.values()), Counter()).values()) if cells else 0
        row = [f"{name} ({total})"]
        for s in selectors:
            values = cells.get(s, Counter())
            text = ", ".join(f"{v}: {n}" for v, n in sorted(values.items()))
            row.append(text if len(values) >= 2 else f"{text or '-'} *")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "\\* not varied:", ""]
    for name in table:
        for s in selectors:
            if len(table[name].get(s, ())) < 2 and reasons.get(name, {}).get(s):
                lines.append(f"- {name} x {s}: {reasons[name][s]}")
    return "\n".join(lines) + "\n"


def covering_sample(items: list[Item]) -> set[str]:
    """The ids of a small, deterministic set of items that reaches every cell the whole set
    reaches: each behaviour class with each value of each path selector (the element type among
    them) at each operator version, each operator version with each element type, and each case
    on each operator (a greedy set cover; ties go to the first id in order). A first signal for a
    runtime too slow for the whole suite: ``--conformance-sample`` (about a twentieth of it)."""
    import heapq

    from ..expand.items import qualified_op

    classes: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, spec in selectors_data()["classes"].items():
        for ref in spec["cases"]:
            file, _, case = ref.partition(":")
            classes[file, case].append(name)
    cells_of: dict[str, set[tuple[Any, ...]]] = {}
    for item in items:
        op = qualified_op(item.case.domain, item.case.op)
        where = (op, item.version)
        base = (item.case.file.name, item.case.name.split("/")[0])
        cells: set[tuple[Any, ...]] = {("case", *base, op), ("type", *where, item.dtype)}
        if not item.case.reject and classes.get(base):
            try:
                values = selector_values(item)
            except (KeyError, TypeError, ValueError, IndexError):
                values = {}
            cells |= {(name, selector, value, *where) for name in classes[base] for selector, value in values.items()}
        cells_of[item.id] = cells
    uncovered = set().union(*cells_of.values()) if cells_of else set()
    heap = [(-len(cells), item_id) for item_id, cells in cells_of.items()]
    heapq.heapify(heap)
    chosen = set()
    while uncovered and heap:
        _, item_id = heapq.heappop(heap)
        gain = len(cells_of[item_id] & uncovered)
        if gain and heap and gain < -heap[0][0]:  # lazy greedy: its gain fell, so it waits its turn again
            heapq.heappush(heap, (-gain, item_id))
        elif gain:
            chosen.add(item_id)
            uncovered -= cells_of[item_id]
    return chosen

"""What an item is, by the path selectors the docs and the reports cross it with: its rank, its
Indices, stride, padding and planes (the columns of the open-questions table, which each result
record carries as its ``path``)."""

from __future__ import annotations

from .items import Item

RANKS = ("1d", "2d", "3d", "4d+")


def attributes_of(item: Item) -> dict:
    return item.case.attributes


def rank_of(item: Item) -> str:
    rank = len(item.inputs[0].spec.shape) - 2
    return f"{rank}d" if rank < 4 else "4d+"


QUESTION_COLUMNS = (("rank", RANKS), ("indices", ("with", "without", "input")), ("stride", ("1", ">1")),
                    ("padding", ("none", "begin", "end", "both", "SAME_UPPER", "SAME_LOWER", "VALID")),
                    ("planes", ("1", "several")))


def _padding(item: Item) -> str:
    a = attributes_of(item)
    auto_pad = str(a.get("auto_pad", "NOTSET")).upper()
    if auto_pad not in ("NOTSET", "EXPLICIT", ""):
        return auto_pad
    rank = len(item.inputs[0].spec.shape) - 2
    pads = list(a.get("pads", [])) or list(a.get("pads_begin", [0] * rank)) + list(a.get("pads_end", [0] * rank))
    begin, end = any(pads[:rank]), any(pads[rank:])
    return {(False, False): "none", (True, False): "begin", (False, True): "end", (True, True): "both"}[begin, end]


def question_columns(item: Item) -> list[str]:
    """The column of each selector ``item`` takes in the open-questions table."""
    shape = item.inputs[0].spec.shape
    indices = "input" if item.case.op == "MaxUnpool" else ("with" if any(o.positions_of for o in item.outputs) else "without")
    strides = list(attributes_of(item).get("strides", [])) or [1]
    return [f"rank {rank_of(item)}", f"indices {indices}", f"stride {'>1' if max(strides) > 1 else '1'}",
            f"padding {_padding(item)}", f"planes {'1' if shape[0] * shape[1] == 1 else 'several'}"]

"""Each named limit of the judge and the report at its boundary: the last value it lets through
and the first it stops, so that an off-by-one or a limit that no longer binds shows here."""

from __future__ import annotations

import numpy as np

from conformance.judge import compare as compare_module
from conformance.judge.analysis import diagnosis
from conformance.judge.analysis.catalogue import BY_NAME
from conformance.judge.verdict import Outcome, evaluate
from conformance.report import deciding
from tests.support.bundled import bundled_items
from tests.meta.support.mutant_backend import REGISTRY


def test_a_mismatch_shows_its_first_positions_and_counts_the_rest():
    limit = compare_module.SHOWN_MISMATCHES
    want = np.zeros(limit + 1, np.float32)
    at_the_limit = compare_module._check_values("Y", want, np.where(np.arange(limit + 1) < limit, 1, 0).astype(np.float32))
    (shown,) = at_the_limit
    assert len(shown.shown) == limit and not any("more" in line for line in shown.shown)
    (past,) = compare_module._check_values("Y", want, np.ones(limit + 1, np.float32))
    assert len(past.shown) == limit + 1 and past.shown[-1] == "... and 1 more"


def _record(n: int, rank: int, stride: int, outcome: str) -> dict:
    return {"id": f"MaxPool-12/c{n}[float32]", "backend": "mine", "op": "MaxPool", "version": 12, "outcome": outcome,
            "attributes": {"kernel_shape": [2] * rank, "strides": [stride] * rank},
            "inputs": [{"name": "X", "shape": [1, 1] + [4] * rank, "dtype": "float32"}],
            "path": [f"rank {rank}d" if rank < 4 else "rank 4d+", f"stride {'>1' if stride > 1 else '1'}"]}


def test_a_line_below_the_smallest_is_left_whole_and_one_at_it_is_named_by_what_decides_it():
    """Every failing item is of rank 4 and stride 2, and every other item passes: at SMALLEST_LINE
    items the line is named by that predicate; one item fewer, it is left whole, unnamed."""
    def run(failing: int) -> list[tuple[str | None, list[dict]]]:
        line = [_record(n, 4, 2, "fail") for n in range(failing)]
        passing = [_record(100 + n, rank, stride, "pass") for n, (rank, stride) in
                   enumerate([(4, 1), (1, 2), (2, 2), (1, 1)] * 10)]
        return deciding.split(line, line + passing)

    at_the_limit = run(deciding.SMALLEST_LINE)
    assert [(name, len(part)) for name, part in at_the_limit] == [("rank 4d+ and stride >1", deciding.SMALLEST_LINE)]
    below = run(deciding.SMALLEST_LINE - 1)
    assert [(name, len(part)) for name, part in below] == [(None, deciding.SMALLEST_LINE - 1)]


class SeededAtZeroAndOneMore:
    """The model of a running maximum seeded at 0, with one more element wrong that no model gives
    (Y's last, or where ``indices_too`` Indices' last): nothing reproduces it, so diagnosis runs
    every pair it may, and then the triples."""

    version = "0"
    name = "seeded at zero, and one more"

    def __init__(self, indices_too: bool = False):
        self.indices_too = indices_too

    def details(self):
        return {}

    def run(self, model, inputs):
        outputs = [o.copy() for o in BY_NAME["accumulator_starts_at_zero"].backend.run_model(
            model, [inputs[i.name] for i in model.graph.input])]
        target = outputs[1] if self.indices_too else outputs[0]
        target.reshape(-1)[-1] = 10**6 if self.indices_too else 1234.5
        return outputs


TRIPLE_ITEM = "MaxPool-12/integer_type_extremes/int8[int8]"  # Y and Indices: pairs that give Y exactly, many


def _runs_of_pairs(monkeypatch, item_id: str, backend) -> list[tuple]:
    runs: list[tuple] = []
    real = diagnosis.stacked
    monkeypatch.setattr(diagnosis, "stacked", lambda a, b: runs.append((a, b)) or real(a, b))
    item = next(i for i in bundled_items() if i.id == item_id)
    verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
    assert verdict.outcome is Outcome.FAIL and verdict.diagnosis == []
    return runs


def test_as_many_pairs_as_the_limit_are_run_for_an_item_that_has_more(monkeypatch):
    item = "MaxPool-1/negative_zero/y[float32]"  # Y alone: no triples
    assert len(_runs_of_pairs(monkeypatch, item, SeededAtZeroAndOneMore())) == diagnosis.PAIR_LIMIT
    monkeypatch.setattr(diagnosis, "PAIR_LIMIT", diagnosis.PAIR_LIMIT + 1)
    assert len(_runs_of_pairs(monkeypatch, item, SeededAtZeroAndOneMore())) == diagnosis.PAIR_LIMIT


def test_a_third_model_is_tried_on_as_many_pairs_as_the_limit(monkeypatch):
    """Each pair more that a third model is tried on adds its triples: at the limit, one pair more
    than one under it, one fewer than one over it (the item has more such pairs)."""
    def triples(limit: int) -> int:
        monkeypatch.setattr(diagnosis, "TRIPLE_PAIRS", limit)
        runs = _runs_of_pairs(monkeypatch, TRIPLE_ITEM, SeededAtZeroAndOneMore(indices_too=True))
        return sum("_parts" in vars(lower) for _, lower in runs)  # a model over a pair: a triple
    limit = diagnosis.TRIPLE_PAIRS
    assert triples(limit - 1) < triples(limit) < triples(limit + 1)

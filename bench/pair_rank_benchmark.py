"""Where, in diagnosis's ranked list of pairs, the first pair that reproduces a two-bug item sits:
the figure behind ``PAIR_LIMIT`` (conformance/judge/analysis/diagnosis.py). Ten pairs of defect models, each
run as a backend on up to 40 items it applies to (of the first 1,500 of the round-robin order),
with the limit lifted and the pairs diagnosis runs counted.

    python -m bench.pair_rank_benchmark
"""

from __future__ import annotations

import time

import numpy as np

from conformance.judge.analysis import diagnosis
from conformance.judge.analysis.catalogue import BY_NAME, DEFECTS
from conformance.judge.analysis.models.kit import stacked as real
from conformance.judge.analysis.diagnosis import facts
from conformance.judge.verdict import Outcome, evaluate
from tests.meta.support.mutant_backend import REGISTRY, items_round_robin


class Pair:
    """Two defect models at once, as a backend."""

    version = "0"

    def __init__(self, first: str, second: str):
        self.name, self.backend = f"{first}+{second}", real(BY_NAME[first].backend, BY_NAME[second].backend)

    def details(self):
        return {}

    def run(self, model, inputs):
        return list(self.backend.run_model(model, [inputs[i.name] for i in model.graph.input]))


PAIRS = [("accumulator_starts_at_zero", "kernel_reversed"), ("padding_is_zero", "end_pads_ignored"), ("end_pads_ignored", "indices_per_plane"),
         ("ceil_mode_ignored", "indices_per_plane"), ("padding_is_zero", "storage_order_ignored"), ("float64_through_float32", "ceil_mode_ignored"),
         ("dilations_ignored", "accumulator_starts_at_zero"), ("same_split_swapped", "subnormals_flushed"), ("int8_compared_unsigned", "end_pads_ignored"),
         ("negative_zero_made_positive", "strides_reversed")]


def main() -> None:
    runs: list[tuple] = []  # the pairs (and triples) diagnosis ran, in its order, for one item
    diagnosis.PAIR_LIMIT = 10**6
    diagnosis.stacked = lambda a, b: runs.append((a, b)) or real(a, b)  # type: ignore[assignment]
    name_of = {d.backend: d.name for d in DEFECTS}
    ranks, ranked, seconds = [], [], []
    pool = [i for i in items_round_robin() if not i.case.reject][:1500]
    for a, b in PAIRS:
        backend = Pair(a, b)
        for item in [i for i in pool if BY_NAME[a].applies(facts(i)) and BY_NAME[b].applies(facts(i))][:40]:
            runs.clear()
            started = time.perf_counter()
            verdict = evaluate(item, backend, seed=0, registry=REGISTRY)
            spent = time.perf_counter() - started
            named = [tuple(m.name for m in d.models) for d in verdict.diagnosis if len(d.models) == 2]
            tried = [(name_of.get(x, '?'), name_of.get(y, '?')) for x, y in runs]
            if verdict.outcome is Outcome.FAIL and (found := [tried.index(d) for d in named if d in tried]):
                ranks.append(min(found))
                ranked.append(len(runs))
                seconds.append(spent / len(runs))
    at = np.array(ranks)
    print(f"{len(at)} items diagnosed as a pair; the first pair that reproduces one is number {int(at.max()) + 1} "
          f"at most (median {np.median(at) + 1:.0f}, 90th percentile {np.percentile(at, 90) + 1:.0f}); "
          f"{int((at >= 60).sum())} lie past the 60th")
    print(f"pairs run for an item with no limit: median {np.median(ranked):.0f}, at most {max(ranked)}; "
          f"{np.median(seconds) * 1e3:.2f} ms of the item's judging per pair run (median)")


if __name__ == "__main__":
    main()

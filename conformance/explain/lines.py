"""Which of a run's failure lines are explained by experiment, within what budget, and how the
result reaches the records.

Every line that no defect model names is explained (a wrong answer no model reproduces, a refusal
of a valid model, a crash, a timeout), the largest first, each from its smallest item; not a line of
invalid models (what a runtime lets through is a missing check, named by its rule) nor one of a failed
valid twin (its twin is the minimal model already). The run's budget is a quarter of its own time
by default, each line's a share of it; past the budget, lines stay as they are. Each record of an
explained line carries the explanation's key and text (``explanation``), and the document the whole
of each (``explanations``); no outcome changes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..backends import Backend
from ..expand.items import Item
from ..load.cases import Ambiguity
from ..report.causes import DIAGNOSED, MINIMAL, Cluster, failure_clusters
from ..report.record import ItemRecord
from .experiment import Experiment, Explanation
from .factors import config_of

SHARE_OF_RUN = 0.25  # the run's budget by default: a quarter of its own time, so that a run stays a run
# Each line's probes, at most: a shrink of a 3-D model with Indices takes about 40, the variation of
# the minimal model about 25; a converter at a second a model spends two minutes on a line at most.
MAX_PROBES = 120
LINE_SHARE = 0.5  # of the budget left, the most one line may take: the largest line never starves the rest


@dataclass
class Explained:
    """What the run's experiments did: the lines explained, those left for want of budget."""

    explanations: list[dict] = field(default_factory=list)
    left: int = 0  # lines that needed an explanation and got none: the budget was spent
    probes: int = 0
    seconds: float = 0.0


def of_valid_models(cluster: Cluster) -> bool:
    return MINIMAL not in cluster.signature and all(r.get("expected") != "reject" for r in cluster.records)


def explain_lines(records: list[ItemRecord], runners: Mapping[str, Backend], find: Callable[[ItemRecord], Item | None],
                  registry: dict[str, Ambiguity], seed: int, budget_s: float,
                  progress: Callable[[str], None] = lambda line: None) -> Explained:
    """Explain the run's lines of valid models (``of_valid_models``) on ``runners`` (backend name ->
    the runner its items ran on), within ``budget_s`` seconds; each record of an explained line
    gets its ``explanation``."""
    done = Explained()
    started = time.monotonic()
    deadline = started + budget_s
    valid = [c for clusters in failure_clusters(records).values() for c in clusters if of_valid_models(c) and c.backend in runners]
    # The lines no model names, the largest first; then, where some of a backend's were explained,
    # its diagnosed lines, the smallest first: a model that reproduces a few items of a cause by
    # coincidence (dilations ignored, where only the first axis has one) joins that cause's line
    # where the experiments agree, and is left as it is otherwise.
    lines = sorted((c for c in valid if DIAGNOSED not in c.signature), key=lambda c: -len(c.records))
    diagnosed = sorted((c for c in valid if DIAGNOSED in c.signature), key=lambda c: len(c.records))
    found: list[tuple[Cluster, Explanation]] = []
    queue = [(c, False) for c in lines] + [(c, True) for c in diagnosed]
    for number, (cluster, named) in enumerate(queue):
        if named and not any(c.backend == cluster.backend for c, _ in found):
            continue
        now = time.monotonic()
        if now >= deadline:
            done.left = len(lines) - min(number, len(lines))
            break
        smallest = cluster.smallest
        item = find(smallest)
        config = config_of(item, seed) if item is not None else None
        if config is None:
            continue
        experiment = Experiment(runners[cluster.backend], registry, seed, MAX_PROBES,
                                now + LINE_SHARE * (deadline - now) if number < len(queue) - 1 else deadline)
        explanation = experiment.explain(smallest["id"], config)
        done.probes += experiment.probes
        # cut short before any factor was seen to decide, an experiment says nothing of the line
        if explanation is not None and (explanation.complete or explanation.deciding):
            found.append((cluster, explanation))
            progress(f"{cluster.backend}: {cluster.signature[:80]}: {explanation.text()}")
    # a diagnosed line stays as its model names it unless its experiment agrees with an undiagnosed line's
    groups = [g for g in _agreeing(found) if any(DIAGNOSED not in c.signature for c, _ in g)]
    for group, members in enumerate(groups):
        # the group's words: its most telling experiment (the most deciding factors measured), the largest line's of those
        told = max(members, key=lambda m: (len(m[1].deciding), len(m[0].records)))[1].text()
        for cluster, explanation in members:
            written = explanation.as_json()
            key = f"{cluster.backend}: {explanation.kind}: {group}"
            done.explanations.append({"backend": cluster.backend, "line": cluster.signature, "items": len(cluster.records),
                                      "group": key, **written})
            for r in cluster.records:
                r["explanation"] = {"key": key, "text": told, "probed": written["probed"]}
    done.seconds = time.monotonic() - started
    return done


def _agreeing(found: list[tuple[Cluster, Explanation]]) -> list[list[tuple[Cluster, Explanation]]]:
    """The explained lines in groups of one cause, in the order found: a line joins the first group
    of its backend whose every line's experiment agrees with its own (``Explanation.agrees_with``),
    else starts one. Every pair in a group agrees: agreement is not carried from line to line, so
    that two causes never meet through a third line that agrees with each."""
    groups: list[list[tuple[Cluster, Explanation]]] = []
    for cluster, explanation in found:
        group = next((g for g in groups if g[0][0].backend == cluster.backend
                      and all(explanation.agrees_with(other) for _, other in g)), None)
        if group is None:
            groups.append([(cluster, explanation)])
        else:
            group.append((cluster, explanation))
    return groups

"""The broken backends of the self-test as the judge sees them: a mutant (or a path mutant) of the
reference wrapped as a backend, and the bundled items in the order the self-test visits them
(round-robin across case classes, so that a mutant usually dies early)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from functools import cache

from tests.meta.support.mutants import Mutant
from tests.meta.support.mutants_paths import PathMutant
from tests.support.bundled import bundled_items, bundled_registry

REGISTRY = bundled_registry()


@cache
def items_round_robin():
    by_class = defaultdict(list)
    for item in bundled_items():
        by_class[item.case.file.name, item.case.name.split("/")[0]].append(item)
    return [item for batch in itertools.zip_longest(*by_class.values()) for item in batch if item]


class MutantBackend:
    version = "0"

    def __init__(self, mutant: Mutant | PathMutant):
        self.mutant, self.name = mutant, f"mutant:{mutant.name}"

    def details(self):
        return {}

    def run(self, model, inputs):
        if isinstance(self.mutant, PathMutant):
            return self.mutant.run(model, inputs)
        rep = self.mutant.backend.prepare(model)
        return rep.run([inputs[vi.name] for vi in model.graph.input])

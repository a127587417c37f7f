"""A long randomized or sliced test split between the two tiers (tests/conftest.py, ``--tier``):
a share in the fast tier, which the README's test command runs, and the rest in the slow tier,
which .ci/run runs after it. CI runs the whole; a developer's loop runs a quarter."""

from __future__ import annotations

import math
from typing import Callable

import pytest
from hypothesis import given, settings

FAST_SHARE = 0.25  # of the examples or items: enough to meet a broken change at once, a quarter of the time


def split_examples(total: int):
    """Parametrize a test by ``examples``: its fast tier's share of ``total``, and the rest (slow)."""
    fast = max(1, round(total * FAST_SHARE))
    return pytest.mark.parametrize("examples", [pytest.param(fast, id=f"fast{fast}"),
                                                pytest.param(total - fast, id=f"rest{total - fast}", marks=pytest.mark.slow)])


def drawn(examples: int, *strategies) -> Callable[[Callable], None]:
    """Run ``check`` on ``examples`` draws of ``strategies`` (hypothesis, no deadline: the loops'
    time depends on the machine's load, never on the code under test)."""
    def run(check: Callable) -> None:
        settings(max_examples=examples, deadline=None)(given(*strategies)(check))()
    return run


def split_items():
    """Parametrize a test by ``share``: the fast tier's share of its items, or the rest (slow);
    ``share_of`` takes it from the items."""
    return pytest.mark.parametrize("share", [pytest.param("fast", id="fast"),
                                             pytest.param("rest", id="rest", marks=pytest.mark.slow)])


def share_of(items: list, share: str) -> list:
    """The first quarter of ``items`` (at least one) for the fast share; the others for the rest."""
    fast = max(1, math.ceil(len(items) * FAST_SHARE))
    return items[:fast] if share == "fast" else items[fast:]

"""How the project's own tests are shared and chosen (tests/conftest.py): xdist's workers steal
work from each other, a ``--dist`` of one's own is kept, and the default tier is the fast one for
a directory and every test where a file or a test is named."""

from __future__ import annotations

from types import SimpleNamespace

from xdist.scheduler import WorkStealingScheduling

from tests.conftest import pytest_xdist_make_scheduler, tier


def _config(dist: str = "load", args: tuple[str, ...] = ("tests",), asked: str | None = None):
    options = {"dist": dist, "tier": asked, "numprocesses": 2, "tx": ["2*popen"], "maxworkerrestart": None, "maxschedchunk": None}
    return SimpleNamespace(getoption=options.__getitem__, getvalue=options.__getitem__,
                           option=SimpleNamespace(**options), args=list(args))


def test_a_plain_n_steals_work_and_a_named_dist_is_kept():
    assert isinstance(pytest_xdist_make_scheduler(_config(), log=None), WorkStealingScheduling)
    assert pytest_xdist_make_scheduler(_config("loadfile"), log=None) is None


def test_a_directory_runs_the_fast_tier_and_a_named_file_or_test_runs_every_tier():
    assert tier(_config(args=("tests",))) == "fast"
    assert tier(_config(args=("tests/test_export.py",))) == "all"
    assert tier(_config(args=("tests/meta/test_mutants.py::test_the_suite_catches_the_mutant",))) == "all"
    assert tier(_config(args=("tests",), asked="slow")) == "slow"

"""How the project's own tests are shared and chosen (tests/conftest.py): xdist's workers take
one test at a time and a file with a shared fixture whole, a ``--dist`` of one's own is kept, and
the default tier is the fast one for a directory and every test where a file or a test is named."""

from __future__ import annotations

from types import SimpleNamespace

from pathlib import Path

from tests.conftest import SharedFixturesWhole, files_with_shared_fixtures, pytest_xdist_make_scheduler, tier


def _config(dist: str = "load", args: tuple[str, ...] = ("tests",), asked: str | None = None):
    options = {"dist": dist, "loadscopereorder": True, "tier": asked, "numprocesses": 2, "tx": ["2*popen"], "maxworkerrestart": None, "maxschedchunk": None}
    return SimpleNamespace(getoption=options.__getitem__, getvalue=options.__getitem__,
                           option=SimpleNamespace(**options), args=list(args))


def test_a_plain_n_keeps_each_file_with_a_shared_fixture_whole_and_a_named_dist_is_kept():
    config = _config()
    scheduler = pytest_xdist_make_scheduler(config, log=None)
    assert isinstance(scheduler, SharedFixturesWhole)
    assert scheduler._split_scope("tests/test_isolation.py::test_x[Aborts]") == "tests/test_isolation.py"
    assert scheduler._split_scope("tests/test_scheduling.py::test_y") == "tests/test_scheduling.py::test_y"
    assert pytest_xdist_make_scheduler(_config("loadfile"), log=None) is None


def test_the_files_with_shared_fixtures_are_read_from_the_sources(tmp_path: Path):
    (tmp_path / "tests" / "meta").mkdir(parents=True)
    (tmp_path / "tests" / "meta" / "test_a.py").write_text('@pytest.fixture(scope="module")\ndef run(): ...\n')
    (tmp_path / "tests" / "test_b.py").write_text("@pytest.fixture\ndef run(): ...\n")
    assert files_with_shared_fixtures(tmp_path / "tests") == {"tests/meta/test_a.py"}
    assert "tests/test_isolation.py" in files_with_shared_fixtures()


def test_a_directory_runs_the_fast_tier_and_a_named_file_or_test_runs_every_tier():
    assert tier(_config(args=("tests",))) == "fast"
    assert tier(_config(args=("tests/test_export.py",))) == "all"
    assert tier(_config(args=("tests/meta/test_mutants.py::test_the_suite_catches_the_mutant",))) == "all"
    assert tier(_config(args=("tests",), asked="slow")) == "slow"

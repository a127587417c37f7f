"""--conformance-id selects exactly the items named: not the NHWC twin whose id holds the name
(as -k's substring does), ids read from a file too, and an unreadable file is one line, exit 4."""

from __future__ import annotations

import pytest
import subprocess
import sys

from conformance.plugin import PACKAGE_DIR

ROOT = PACKAGE_DIR.parent
ITEM = "MaxPool-12/infinities/1d-y[float32]"


@pytest.fixture
def collect(tmp_path_factory):
    """A collection run from the project's root; pytest's own cache out of the tree, the bundled
    cases read from the user's cache, as a pasted repro line reads them."""
    cache = tmp_path_factory.mktemp("pytest-cache")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "conformance", "--collect-only", "-q",
                               "-o", f"cache_dir={cache}", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return run


@pytest.mark.slow
def test_the_exact_id_selects_one_item_where_k_selects_two(collect):
    by_k = collect("-k", ITEM)
    exact = collect("--conformance-id", ITEM)
    assert by_k.stdout.count("infinities/1d-y[float32]") == 2, by_k.stdout  # and the NHWC twin
    assert [line for line in exact.stdout.splitlines() if "::" in line] == [f"cases/maxpool_edges.yaml::{ITEM}"], exact.stdout


def test_ids_come_from_a_file_too(tmp_path, collect):
    listed = tmp_path / "ids.txt"
    listed.write_text(f"# the two I care about\n{ITEM}\n\nMaxUnpool-9/without_output_shape[float32]\n")
    done = collect(f"--conformance-id=@{listed}")
    assert sorted(line.split("::")[1] for line in done.stdout.splitlines() if "::" in line) == \
        ["MaxPool-12/infinities/1d-y[float32]", "MaxUnpool-9/without_output_shape[float32]"], done.stdout


def test_an_unreadable_id_file_is_a_usage_error_in_one_line(tmp_path, collect):
    done = collect(f"--conformance-id=@{tmp_path / 'missing.txt'}")
    assert done.returncode == 4 and "--conformance-id @" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_shards_split_the_items_between_them_exactly(tmp_path, collect):
    import shutil

    shutil.copy(ROOT / "cases" / "maxunpool_edges.yaml", tmp_path / "maxunpool_edges.yaml")

    def ids(*args):
        done = collect("--cases", str(tmp_path), *args)
        return {line for line in done.stdout.splitlines() if "::" in line}

    whole = ids()
    parts = [ids(f"--conformance-shard={i}/3") for i in (1, 2, 3)]
    assert all(parts) and set().union(*parts) == whole and sum(map(len, parts)) == len(whole)
    bad = collect("--conformance-shard=4/3")
    assert bad.returncode == 4 and len(bad.stderr.strip().splitlines()) == 1


def test_the_covering_sample_reaches_every_cell_the_whole_suite_reaches():
    """--conformance-sample: a deterministic twentieth of the items that still reaches every behaviour
    class x path-selector value x operator version, every version x element type and every case."""
    from conformance.expand.items import qualified_op
    from conformance.docgen.coverage import covering_sample, selector_values, selectors_data
    from tests.support.bundled import bundled_items

    items = bundled_items()
    chosen = covering_sample(items)
    assert chosen == covering_sample(list(reversed(items))) and len(chosen) < len(items) / 10

    classes: dict = {}
    for name, spec in selectors_data()["classes"].items():
        for ref in spec["cases"]:
            classes.setdefault(tuple(ref.partition(":")[::2]), []).append(name)

    def cells(subset):
        found = set()
        for item in subset:
            op = qualified_op(item.case.domain, item.case.op)
            base = (item.case.file.name, item.case.name.split("/")[0])
            found |= {("case", *base, op), ("type", op, item.version, item.dtype)}
            if not item.case.reject:
                found |= {(n, s, v, op, item.version) for n in classes.get(base, ()) for s, v in selector_values(item).items()}
        return found

    assert cells([i for i in items if i.id in chosen]) == cells(items)

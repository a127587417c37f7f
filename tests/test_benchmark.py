"""The benchmark (`nox -s bench`) runs, on small shapes, and its backends agree on them."""

from __future__ import annotations

import pytest

from bench import benchmark

pytest.importorskip("onnxruntime")


def test_the_quick_benchmark_prints_a_row_per_case_and_the_backends_agree(capsys, tmp_path):
    assert benchmark.main(["--quick", "--repeats", "1", "--markdown", str(tmp_path / "bench.md")]) == 0
    rows = [line for line in (tmp_path / "bench.md").read_text().splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + len(benchmark.cases(quick=True))
    assert all(row.endswith("| yes |") for row in rows[1:]), rows

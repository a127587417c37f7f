"""An undiagnosed line split by its deciding attributes (conformance/report/deciding.py): only where
the run shows that every item with them fails so, and each of them decides."""

from __future__ import annotations

import itertools

from conformance.report.causes import failure_clusters


def _record(n: int, rank: int, stride: int, padding: str, outcome: str, message: str = "") -> dict:
    attributes = {"kernel_shape": [2] * rank, "strides": [stride] * rank}
    if padding == "end":
        attributes["pads"] = [0] * rank + [1] * rank
    return {"id": f"MaxPool-12/c{n}[float32]", "backend": "mine", "op": "MaxPool", "version": 12,
            "outcome": outcome, "message": message, "expected": "derived", "attributes": attributes,
            "inputs": [{"name": "X", "shape": [1, 1] + [4] * rank, "dtype": "float32"}],
            "path": [f"rank {rank}d" if rank < 4 else "rank 4d+", "indices without", f"stride {'>1' if stride > 1 else '1'}",
                     f"padding {padding}", "planes 1"]}


def _run(fails) -> list[dict]:
    """Items of every rank, stride and padding, twice each; ``fails`` says which fail (how)."""
    records = []
    for n, (rank, stride, padding, twice) in enumerate(itertools.product((1, 2, 3, 4), (1, 2), ("none", "end"), (0, 1))):
        outcome, message = fails(rank, stride, padding) or ("pass", "")
        records.append(_record(n, rank, stride, padding, outcome, message))
    return [dict(r) for r in records for _ in range(4)]  # four of each: each part holds ten items or more


def _lines(records: list[dict]) -> dict[str, int]:
    for i, r in enumerate(records):
        r["id"] = f"{r['id']}-{i}"
    return {c.signature: len(c.records) for c in failure_clusters(records)["mine"]}


def test_two_bugs_behind_one_signal_are_two_lines_each_named_by_what_decides_it():
    def fails(rank, stride, padding):
        if rank == 4 and stride > 1 or rank == 1 and padding == "end":
            return "crash", "the backend's process was killed by SIGSEGV"
        return None

    assert _lines(_run(fails)) == {
        "crash: the backend's process was killed by SIGSEGV where padding end and rank 1d": 16,
        "crash: the backend's process was killed by SIGSEGV where rank 4d+ and stride >1": 16}


def test_a_line_whose_items_share_what_decides_it_stays_whole_and_is_named_by_it():
    """Every item of rank 3 fails: padding and stride make no difference, so the line is one, named
    by the rank alone."""
    assert _lines(_run(lambda rank, stride, padding: ("crash", "SIGFPE") if rank == 3 else None)) == {
        "crash: SIGFPE where rank 3d": 32}


def test_a_backend_that_crashes_under_one_attribute_condition_is_one_line_naming_it():
    assert _lines(_run(lambda rank, stride, padding: ("crash", "SIGFPE") if stride > 1 else None)) == {
        "crash: SIGFPE where stride >1": 64}


def test_a_line_no_predicate_holds_keeps_its_own_name():
    """Items of every kind fail, some items of every kind pass: nothing the run shows decides."""
    flip = itertools.cycle([True, False, False])
    assert list(_lines(_run(lambda rank, stride, padding: ("crash", "SIGFPE") if next(flip) else None))) == ["crash: SIGFPE"]


def test_a_part_is_not_named_by_what_a_passing_item_also_has():
    def fails(rank, stride, padding):
        return ("fail", "Y values differ") if rank == 3 or (rank, stride) == (2, 2) else None

    assert _lines(_run(fails)) == {"fail: Y values differ where rank 3d": 32,
                                   "fail: Y values differ where rank 2d and stride >1": 16}
    records = _run(fails) + [_record(900, 2, 2, "none", "pass")]  # a twin of the second part passes
    assert _lines(records) == {"fail: Y values differ where rank 3d": 32, "fail: Y values differ": 16}


def _empty_output_run(also_refused: bool = False) -> list[dict]:
    """Kernels of 2 over axes of 1 (an empty output by the documents) refused with one message per
    rank (as torch words them), beside kernels over axes of 4 that run; ``also_refused``: a few of
    those refused the same way."""
    records = []
    for n, (rank, size, twice) in enumerate(itertools.product((1, 2, 3), (1, 4), range(6))):
        refused = size == 1 or (also_refused and rank == 1 and twice == 0)
        words = ("Invalid computed output size", "Output size is too small", "Expected a non-empty input")[rank - 1]
        record = _record(n, rank, 1, "none", "error" if refused else "pass", f"RuntimeError: {words}" if refused else "")
        record["inputs"] = [{"name": "X", "shape": [1, 1] + [size] * rank, "dtype": "float32"}]
        records.append(record)
    return records


def test_refusals_worded_per_rank_are_one_line_where_an_empty_output_decides_them():
    assert _lines(_empty_output_run()) == {
        "error where Y empty past N: 3 diagnostics of the runtime": 18}


def test_refusal_lines_are_not_merged_where_the_predicate_holds_other_items_too():
    lines = _lines(_empty_output_run(also_refused=True))
    assert len(lines) == 3 and not any("where" in line for line in lines), lines


def test_a_batch_and_a_channel_refusal_are_one_line_where_an_empty_n_or_c_decides_them():
    """OpenVINO's pooling shape inference checks N and C together, with a message for each."""
    records = []
    for n, (axis, size, twice) in enumerate(itertools.product((0, 1), (0, 3), range(6))):
        record = _record(n, 2, 1, "none", "pass")
        record["inputs"] = [{"name": "X", "shape": [size, 2, 4, 4] if axis == 0 else [2, size, 4, 4], "dtype": "float32"}]
        if size == 0:
            record.update(outcome="error", message=f"RuntimeError: {('Batch size', 'Channel count')[axis]} is zero.")
        records.append(record)
    assert _lines(records) == {"error where empty N or C: 2 diagnostics of the runtime": 12}

"""`conformance sweep` and `conformance bisect`: the suite on every release of each runtime.

    conformance sweep sweeps/releases.yaml --out reports/sweep

runs one cell per runtime and release (each in an environment of its own, up to one per core at
once), reuses the cells that ran before on the same suite, and writes the scoreboard
(OUT/scoreboard/index.html and scoreboard.json). ``--cell LABEL`` runs one cell only (a CI job of a
matrix, ``--matrix`` prints it); ``--list`` prints the cells.

    conformance bisect 'MaxPool-12/x[float32]' --sweep sweeps/releases.yaml --backend ort

finds the first release of the sweep where the item's outcome differs from the oldest's, running
that item alone where no finished cell has it. Exit status: 0 done, 1 a cell that cannot install or
run (sweep), 2 usage error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..load.cases import CaseError
from ..report.results import ResultsError, read_results
from ..report.scoreboard import write_scoreboard
from .cells import RESULTS, Outcome, finished, run_cell
from .plan import Cell, SweepError, as_matrix, read_sweep, suite_revision
from ..load.user_dirs import APP, base_directory

ROOT = Path(__file__).resolve().parents[2]  # the suite's source: each cell installs it, editable


def default_environments() -> Path:
    cache = base_directory("XDG_CACHE_HOME", ".cache")
    if cache is None:
        raise SweepError("no cache directory for the environments (no HOME): pass --environments DIR")
    return cache / APP / "sweep-environments"


def add_parsers(commands) -> None:
    sweep = commands.add_parser("sweep", help="run the suite on every release of each runtime of a sweep file; "
                                "write the scoreboard", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_argument("sweep_file", type=Path, metavar="SWEEP.yaml")
    sweep.add_argument("--out", type=Path, default=Path("reports/sweep"), help="cells and scoreboard (default reports/sweep)")
    sweep.add_argument("--environments", type=Path, default=None, metavar="DIR",
                       help="where the cells' environments are kept (default ~/.cache/maxpool-conformance/sweep-environments)")
    sweep.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cells run at once (default: the cores)")
    sweep.add_argument("--cell", action="append", default=[], metavar="LABEL", help="run only this cell (repeatable)")
    sweep.add_argument("--list", action="store_true", help="print the cells and exit")
    sweep.add_argument("--matrix", action="store_true", help="print the cells as a CI matrix (JSON) and exit")
    sweep.add_argument("--offline", action="store_true", help="use the release lists resolved before; do not ask PyPI")
    sweep.add_argument("--history", type=Path, default=None, metavar="FILE",
                       help="append this sweep's outcome counts to FILE (JSON lines) and plot them on the scoreboard")
    bisect = commands.add_parser("bisect", help="the first release of a sweep where an item's outcome changes")
    bisect.add_argument("item_id", metavar="ITEM_ID")
    bisect.add_argument("--sweep", type=Path, required=True, metavar="SWEEP.yaml")
    bisect.add_argument("--backend", default=None, help="the runtime of the sweep to search (default: its first)")
    bisect.add_argument("--out", type=Path, default=Path("reports/sweep"), help="the sweep's cells (default reports/sweep)")
    bisect.add_argument("--environments", type=Path, default=None, metavar="DIR")
    bisect.add_argument("--offline", action="store_true")


def _root() -> Path:
    if not (ROOT / "pyproject.toml").is_file():
        raise SweepError(f"the sweep installs the suite from its source, and {ROOT} is not one (run it from a clone)")
    return ROOT


def main(args: argparse.Namespace) -> int:
    try:
        return bisect(args) if args.command == "bisect" else sweep(args)
    except (SweepError, CaseError) as e:
        print(f"conformance {args.command}: {e}", file=sys.stderr)
        return 2


def sweep(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise SweepError("--jobs must be 1 or more")
    plan = read_sweep(args.sweep_file, args.out, args.offline)
    cells = plan.cells
    if args.cell:
        unknown = sorted(set(args.cell) - {c.label for c in cells})
        if unknown:
            raise SweepError(f"no cell {', '.join(unknown)} in {args.sweep_file} (see --list)")
        cells = [c for c in cells if c.label in args.cell]
    if args.matrix:
        print(json.dumps(as_matrix(cells)))
        return 0
    for note in plan.notes:
        print(f"releases: {note}")
    if args.list:
        for cell in cells:
            print(f"{cell.label:28} {cell.package}=={cell.version} {' '.join(cell.pins)}")
        return 0
    root = _root()
    revision = suite_revision(root)
    environments = args.environments or default_environments()
    print(f"sweep: {len(cells)} cells, suite revision {revision}, {args.jobs} at once, environments in {environments}")

    def one(cell: Cell) -> Outcome:
        directory = args.out / "cells" / cell.directory_name
        key = cell.key(revision)
        return finished(cell, directory, key) or run_cell(cell, directory, key, environments, root)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(one, cell) for cell in cells]
        for done in as_completed(futures):  # printed here, one whole line at a time
            print(done.result().line(), flush=True)
        outcomes = [future.result() for future in futures]
    ran = [args.out / "cells" / o.cell.directory_name / RESULTS for o in outcomes if o.status == "ran"]
    failed = [o.as_json("") for o in outcomes if o.status != "ran"]
    if not args.cell:  # a CI job runs one cell; the scoreboard is the last job's, from every cell's results
        known = root / "expectations"
        page = write_scoreboard(ran, args.out / "scoreboard", failed, args.history, known if known.is_dir() else None)
        print(f"wrote {page}")
    return 1 if failed else 0


def bisect(args: argparse.Namespace) -> int:
    plan = read_sweep(args.sweep, args.out, args.offline)
    backend = args.backend or plan.cells[0].backend
    cells = sorted((c for c in plan.cells if c.backend == backend), key=lambda c: _version(c.version))
    if len(cells) < 2:
        raise SweepError(f"the sweep has {len(cells)} release(s) of {backend}: nothing to bisect")
    root = _root()
    revision = suite_revision(root)
    environments = args.environments or default_environments()

    def outcome_at(cell: Cell) -> tuple[str, str]:
        swept = args.out / "cells" / cell.directory_name  # a finished cell of the whole sweep
        if finished(cell, swept, cell.key(revision)) is not None:
            record = _record(swept / RESULTS, args.item_id)
            if record is not None:
                return record
        alone = Cell(cell.backend, cell.package, cell.version, cell.pins,
                     (*cell.pytest_args, f"--conformance-id={args.item_id}"))
        directory = args.out / "bisect" / cell.directory_name / _digest(args.item_id)
        key = alone.key(revision)
        done = finished(alone, directory, key) or run_cell(alone, directory, key, environments, root)
        if done.status != "ran":
            raise SweepError(f"{cell.label}: {done.status}: {done.message}")
        record = _record(directory / RESULTS, args.item_id)
        if record is None:
            raise SweepError(f"no item {args.item_id} in the run of {cell.label} (a case the release's suite lacks?)")
        return record

    low, high = 0, len(cells) - 1
    first, last = outcome_at(cells[low]), outcome_at(cells[high])
    if first[0] == last[0]:
        print(f"{args.item_id} on {backend}: {first[0]} in {cells[low].version} and in {cells[high].version}; "
              f"no change between the sweep's ends ({len(cells)} releases)")
        return 0
    seen = {low: first, high: last}
    while high - low > 1:
        middle = (low + high) // 2
        seen[middle] = outcome_at(cells[middle])
        if seen[middle][0] == first[0]:
            low = middle
        else:
            high = middle
    print(f"{args.item_id} on {backend}: changes between {cells[low].version} and {cells[high].version}")
    for index in (low, high):
        outcome, message = seen[index]
        print(f"  {cells[index].version}: {outcome}{': ' + message if message else ''}")
    return 0


def _record(results: Path, item_id: str) -> tuple[str, str] | None:
    try:
        document = read_results(results)
    except ResultsError:
        return None
    return next(((r["outcome"], r.get("message", "")) for r in document["items"] if r["id"] == item_id), None)


def _version(text: str):
    try:
        return (0, Version(text))
    except InvalidVersion:
        return (1, text)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]

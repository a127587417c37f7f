"""`conformance repro ITEM_ID --backend=NAME`: the standalone script of any item, as the fuzz writes
for its findings, ready for a runtime's issue tracker: the model built with onnx.helper, its
literal inputs, the expected outputs (or that the model must be refused) and the check, which
exits 1 on the bug. It needs only numpy, onnx and the runtime.

    conformance repro 'MaxPool-12/2d_pads[float32]' --backend=ort -o repro.py
    conformance repro 'MaxPool-12/2d_pads[float32]' --results out/results.json
    conformance repro 'MaxPool-12/2d_pads[float32]' --backend=ort --twin

With --twin, the script is of the item's valid twin (the minimal valid model of its operator
version, element type, rank and outputs that the judge runs as the control of a refusal): the
repro of a line "fails on the minimal valid model of ...".

With --results, the run's seed, case directory and backend are used, and the script says what
that run saw (results.json keeps these for every item; a failing item's record names this command
as ``script``). Exit status: 0 written, 2 usage error (an unknown item, a bad results.json).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from .expand.cache import ItemValues, cache_found_in
from .expand.items import Item
from .judge.control import twin_of
from .judge.oracle import script_values
from .load.cases import Ambiguity, CaseError, bundled_case_dir, load_registry
from .load.limits import DEFAULT_LIMITS
from .report.record import ItemRecord, RunDocument, seen_line, twin_seen_line
from .report.results import ResultsError, load
from .atomic import write_atomically
from .scripts.items import ReproError, find_item
from .scripts.runners import adapter_directory
from .scripts.standalone import item_script


def add_parser(commands) -> None:
    parser = commands.add_parser("repro", help="write the standalone, upstream-ready script of one item",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("item", help="the item's id, as in the report (a trailing @backend is dropped)")
    parser.add_argument("--backend", help="whose runtime the script runs (default: the run's, with --results)")
    parser.add_argument("--seed", type=int, help="seed of the random inputs (default 0, or the run's)")
    parser.add_argument("--cases", type=Path, help="case directory (default: bundled, or the run's)")
    parser.add_argument("--results", type=Path, help="a run's results.json: its seed, cases, backend and verdict")
    parser.add_argument("--twin", action="store_true", help="the script of the item's valid twin, its minimal valid model")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of standard output")


def main(args: argparse.Namespace) -> int:
    try:
        script = script_of(args.item, args.backend, args.seed, args.cases, args.results, args.twin)
    except (ReproError, ResultsError) as e:
        print(f"conformance repro: {e}", file=sys.stderr)
        return 2
    if args.output:
        write_atomically(args.output, script)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(script)
    return 0


def _importable(backend: str) -> None:
    """A ``module:Class`` backend whose module cannot be found here would give a script that only
    says so: ReproError instead, in one line, with what to set."""
    module, colon, _ = backend.partition("[")[0].partition(":")
    if colon and adapter_directory(backend) is None:
        raise ReproError(f"--backend={backend}: cannot import {module} from here: run from the directory that holds "
                         f"it, or set PYTHONPATH to that directory (or install its package)")


def script_of(item_id: str, backend: str | None, seed: int | None, case_dir: Path | None,
              results: Path | None, twin: bool = False) -> str:
    item_id = item_id.partition("@")[0]
    record = None
    if results:
        run, record = run_record(item_id, backend, results)
        backend = backend or record["backend"]
        seed = run["environment"]["seed"] if seed is None else seed
        case_dir = case_dir or _run_cases(run)
    if backend is None:
        raise ReproError("--backend: whose runtime should the script run? (or give --results)")
    _importable(backend)
    case_dir, seed = case_dir or bundled_case_dir(), seed or 0
    item = find_item(item_id, case_dir, record["file"] if record else None)
    seen = seen_line(record) if record else None
    if twin:
        item, seen = twin_script_item(item, seed), (twin_seen_line(record) if record else None)
    inputs, expected = script_values(item, seed, *_oracle_of(case_dir, seed))
    return item_script(item, backend, seed, inputs, expected, seen, item_id if twin else None)


def twin_script_item(item: Item, seed: int) -> Item:
    """The item's valid twin, whose script ``--twin`` writes."""
    found = twin_of(item, seed)
    if found is None:
        raise ReproError(f"{item.id} has no valid twin (no minimal valid model of its operator version and rank)")
    return found


def _oracle_of(case_dir: Path, seed: int) -> tuple[dict[str, Ambiguity], ItemValues | None]:
    """The registry, and the oracle's values that a run from here kept at ``seed`` (its expected
    outputs, read rather than computed again), where there are any."""
    try:
        registry = load_registry(case_dir)
    except CaseError as e:
        raise ReproError(str(e).splitlines()[0]) from None
    cache = cache_found_in(Path.cwd(), case_dir, DEFAULT_LIMITS)
    return registry, cache.values(seed) if cache else None


def run_record(item_id: str, backend: str | None, results: Path) -> tuple[RunDocument, ItemRecord]:
    run = load([results])
    found = [r for r in run["items"] if r["id"].partition("@")[0] == item_id
             and (backend is None or r["backend"] == backend.partition("[")[0])]
    if len(found) != 1:
        names = ", ".join(sorted({r["backend"] for r in found})) or "none"
        raise ReproError(f"{results}: {len(found)} records of {item_id} (backends: {names}); name one with --backend")
    return run, found[0]


def _run_cases(run: RunDocument) -> Path:
    """The run's case directory, where it is readable from here; else the bundled one."""
    cases = Path(run["environment"]["cases"])
    return cases if cases.is_dir() else bundled_case_dir()

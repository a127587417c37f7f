"""`conformance repro ITEM_ID --backend=NAME`: the standalone script of any item, as the fuzz writes
for its findings, ready for a runtime's issue tracker: the model built with onnx.helper, its
literal inputs, the expected outputs (or that the model must be refused) and the check, which
exits 1 on the bug. It needs only numpy, onnx and the runtime.

    conformance repro 'MaxPool-12/2d_pads[float32]' --backend=ort -o repro.py
    conformance repro 'MaxPool-12/2d_pads[float32]' --results out/results.json

With --results, the run's seed, case directory and backend are used, and the script says what
that run saw (results.json keeps these for every item; a failing item's record names this command
as ``script``). Exit status: 0 written, 2 usage error (an unknown item, a bad results.json).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from .expand.items import Item, expand
from .load.cases import CaseError, bundled_case_dir, case_files, load_case_file, load_registry
from .report.results import ResultsError, load
from .report.writer import write_atomically


class ReproError(Exception):
    """The item cannot be found or rebuilt (one line)."""


def add_parser(commands) -> None:
    parser = commands.add_parser("repro", help="write the standalone, upstream-ready script of one item",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("item", help="the item's id, as in the report (a trailing @backend is dropped)")
    parser.add_argument("--backend", help="whose runtime the script runs (default: the run's, with --results)")
    parser.add_argument("--seed", type=int, help="seed of the random inputs (default 0, or the run's)")
    parser.add_argument("--cases", type=Path, help="case directory (default: bundled, or the run's)")
    parser.add_argument("--results", type=Path, help="a run's results.json: its seed, cases, backend and verdict")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of standard output")


def main(args: argparse.Namespace) -> int:
    try:
        script = script_of(args.item, args.backend, args.seed, args.cases, args.results)
    except (ReproError, ResultsError) as e:
        print(f"conformance repro: {e}", file=sys.stderr)
        return 2
    if args.output:
        write_atomically(args.output, script)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(script)
    return 0


def command(item_id: str, spec: str, seed: int, case_dir: Path | None) -> str:
    """The command line that writes an item's script (results.json's ``script``)."""
    words = ["conformance", "repro", item_id, f"--backend={spec}", f"--seed={seed}"]
    if case_dir is not None and case_dir.resolve() != bundled_case_dir().resolve():
        words.append(f"--cases={case_dir}")
    return shlex.join(words)


def script_of(item_id: str, backend: str | None, seed: int | None, case_dir: Path | None,
              results: Path | None) -> str:
    item_id = item_id.partition("@")[0]
    record = run_record(item_id, backend, results) if results else None
    if record is not None:
        run, record = record
        backend = backend or record["backend"]
        seed = run["environment"]["seed"] if seed is None else seed
        case_dir = case_dir or _run_cases(run)
    if backend is None:
        raise ReproError("--backend: whose runtime should the script run? (or give --results)")
    return item_script(find_item(item_id, case_dir or bundled_case_dir(), record), backend, seed or 0, record)


def run_record(item_id: str, backend: str | None, results: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    run = load([results])
    found = [r for r in run["items"] if r["id"].partition("@")[0] == item_id
             and (backend is None or r["backend"] == backend.partition("[")[0])]
    if len(found) != 1:
        names = ", ".join(sorted({r["backend"] for r in found})) or "none"
        raise ReproError(f"{results}: {len(found)} records of {item_id} (backends: {names}); name one with --backend")
    return run, found[0]


def _run_cases(run: dict[str, Any]) -> Path:
    """The run's case directory, where it is readable from here; else the bundled one."""
    cases = Path(run["environment"]["cases"])
    return cases if cases.is_dir() else bundled_case_dir()


def find_item(item_id: str, case_dir: Path, record: dict[str, Any] | None = None) -> Item:
    """The item, from the record's case file when known (one file to expand), else from all."""
    if not case_dir.is_dir():
        raise ReproError(f"--cases {case_dir}: not a directory")
    try:
        registry = load_registry(case_dir)
        files = case_files(case_dir)
        if record and record.get("file"):
            named = case_dir.parent / record["file"]
            files = [named] if named.is_file() else files
        for file in files:
            for case in load_case_file(file, registry):
                for item in expand(case):
                    if item.id == item_id:
                        return item
    except CaseError as e:
        raise ReproError(str(e).splitlines()[0]) from None
    raise ReproError(f"no item {item_id} in {case_dir} (ids as in the report: Op-version/case[element type])")


def item_script(item: Item, backend: str, seed: int, record: dict[str, Any] | None = None) -> str:
    from .fuzz.output import standalone_script

    kind = "must be refused" if item.case.reject else f"expected outputs {item.expectation}"
    about = [f"{item.id}: {kind} ({item.case.file.name}:{item.case.line})", "",
             f"A maxpool-conformance item ({item.case.description}), for {backend}, inputs of seed {seed}.",
             f"Rewrite it with `{command(item.id, backend, seed, None)}`."]
    if record is not None:
        about.append(f"What the suite saw on {record['backend']} {record.get('backend_version', '')}: "
                     f"{record['outcome']}: {record['message'][:400]}")
    return standalone_script(item, item.make_inputs(seed), backend, item.case.reject, about)

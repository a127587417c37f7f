"""`conformance fuzz`: the differential mode from the command line (pytest's `--conformance-fuzz`
runs the same thing as one test per backend).

    conformance fuzz --backend=ort --budget 1000 --seed 1 --out fuzz-out --report fuzz-report

prints each failure cluster as it is found and shrunk, then one line per cluster; writes the
clusters as cases (OUT/cases/*.yaml, loadable with `pytest conformance --cases OUT/cases`) and
repro scripts (OUT/repro/*.py); with --report, results.json, report.html and summary.md. Exit
status: 0 no failure, 1 failure clusters found, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from ..backends import BackendNotFound, load_backend
from ..backends.isolation.runner import started
from ..load.cases import bundled_case_dir, load_registry
from ..atomic import write_atomically
from ..report.writer import HTML_FILE, MARKDOWN_FILE, RESULTS_FILE, Results, numpy_scalars, environment
from ..report.record import Environment, catalogue_of
from .engine import DEFAULT_BUDGET, DEFAULT_SHRINK_S, Fuzzer, FuzzInterrupted, FuzzRun
from .output import run_document, write_cases, write_repros
from .space import select_targets

DEFAULT_TIMEOUT_S = 60
DEFAULT_MEMORY_LIMIT_MIB = 8192
DEFAULT_MAX_TIME_S = 1800  # a default budget takes about a minute; a hanging backend must not take all night


def add_parser(commands) -> None:
    parser = commands.add_parser("fuzz", help="differential fuzzing against the reference; shrinks and clusters failures",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="reference", help="backend under test (as pytest's --backend)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                        help=f"configurations to judge (default {DEFAULT_BUDGET})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the search (default 0): same seed, same run")
    parser.add_argument("--ops", help="operator versions to draw, e.g. MaxPool-12,org.openvinotoolkit.MaxPool (default all)")
    parser.add_argument("--out", type=Path, help="write the clusters' cases and repro scripts here")
    parser.add_argument("--report", type=Path, help="write results.json, report.html and summary.md here")
    parser.add_argument("--shrink-time", type=float, default=DEFAULT_SHRINK_S, metavar="S",
                        help=f"seconds of shrinking per round of the search (default {DEFAULT_SHRINK_S:g})")
    parser.add_argument("--no-shrink", action="store_true", help="report failures as drawn")
    parser.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME_S, metavar="S",
                        help=f"seconds the whole fuzz may take, every phase included (default {DEFAULT_MAX_TIME_S:g}); "
                             "what is found by then is written, shrunk as far as it got")
    parser.add_argument("--isolation", choices=("process", "none"), default="process",
                        help="run the backend in a child process (default), or in this one")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds an isolated backend may take per model (default {DEFAULT_TIMEOUT_S})")
    parser.add_argument("--memory-limit", type=int, default=DEFAULT_MEMORY_LIMIT_MIB, metavar="MIB",
                        help=f"address-space limit of the isolated backend, 0 for none (default {DEFAULT_MEMORY_LIMIT_MIB})")


def main(args: argparse.Namespace) -> int:
    if args.budget < 1 or args.max_time <= 0:
        print("conformance fuzz: --budget must be at least 1 and --max-time positive", file=sys.stderr)
        return 2
    runner: Any  # the backend, or its isolated runner, which the run closes
    try:
        targets = select_targets(args.ops)
        if args.isolation == "process":
            backend, runner = started(args.backend, args.timeout, args.memory_limit or None)
        else:
            backend = runner = load_backend(args.backend)
    except (ValueError, BackendNotFound, ImportError) as e:
        print(f"conformance fuzz: {e}", file=sys.stderr)
        return 2
    env = environment([(backend, runner)], args.seed, bundled_case_dir(), specs=[args.backend])
    print(f"conformance fuzz: {backend.name} {backend.version}, budget {args.budget}, seed {args.seed}, "
          f"{len(targets)} operator versions, at most {args.max_time:g} s")
    write = _writer(env, args)
    try:
        run = fuzz(runner, targets, args.seed, args.budget, shrink=not args.no_shrink, shrink_s=args.shrink_time,
                   progress=lambda line: print("  " + line, flush=True),
                   deadline=time.monotonic() + args.max_time, checkpoint=lambda run: write(run, final=False))
    except FuzzInterrupted as e:
        run = e.run
    finally:
        if runner is not backend:
            runner.close()
    print(summary(run))
    write(run, final=True)
    if run.stopped == "interrupted":
        print("conformance fuzz: interrupted; what was found is written", file=sys.stderr)
        return 130
    if run.clusters:
        return 1
    if run.judged == 0:  # a green run that tested nothing would read as conformance
        reason = (f"--max-time {args.max_time:g} s passed before any configuration was judged"
                  if run.stopped == "max-time" else NOTHING_JUDGED)
        print(f"conformance fuzz: {reason}", file=sys.stderr)
        return 2
    return 0


def _writer(env: Environment, args: argparse.Namespace) -> Callable[..., None]:
    """Writes the clusters so far (cases, scripts, reports), each file atomically: called as each
    cluster is found or shrunk (the report then says partial), and once at the end."""
    def write(run: FuzzRun, final: bool) -> None:
        if args.out:
            written = write_cases(run, args.out) + write_repros(run, args.out)
            if final:
                print(f"wrote {len(written)} files to {args.out}/ (cases/*.yaml, repro/*.py)")
        if args.report:
            write_fuzz_reports(env, [run], args.report, out=args.out, partial=not final or run.stopped == "interrupted",
                               interrupted=run.stopped == "interrupted")
            if final:
                print(f"wrote {args.report}/ ({RESULTS_FILE}, {HTML_FILE}, {MARKDOWN_FILE})")
    return write


NOTHING_JUDGED = ("nothing was judged: the backend calls every element type unsupported, or every drawn "
                  "configuration was discarded")


def fuzz(runner, targets, seed: int, budget: int, shrink: bool = True, shrink_s: float = DEFAULT_SHRINK_S,
         progress: Callable[[str], None] | None = None, deadline: float | None = None,
         checkpoint: Callable[[FuzzRun], None] | None = None) -> FuzzRun:
    return Fuzzer(runner, load_registry(bundled_case_dir()), targets, seed=seed, budget=budget, shrink=shrink,
                  shrink_s=shrink_s, progress=progress, deadline=deadline, checkpoint=checkpoint).fuzz()


def summary(run: FuzzRun) -> str:
    outcomes = ", ".join(f"{n} {o}" for o, n in sorted(run.outcomes.items()))
    stopped = {"max-time": "; stopped by --max-time", "interrupted": "; interrupted"}.get(run.stopped, "")
    lines = [f"{run.judged} configurations in {run.seconds:.1f} s ({run.per_second:.1f}/s of search; {outcomes}); "
             f"{len(run.clusters)} failure clusters{stopped}"]
    if run.unsupported:
        lines.append(f"not drawn (unsupported): {', '.join(run.unsupported)}")
    for c in run.clusters:
        lines.append(f"  {c.signature.describe()} x{c.hits}; matters: {', '.join(c.matters) or '-'}")
    return "\n".join(lines)


def write_fuzz_reports(env: Environment, runs: list[FuzzRun], directory: Path, out: Path | None = None,
                       base: Results | None = None, partial: bool = False, interrupted: bool = False) -> None:
    """results.json (the clusters' minimal items as records, the runs as its ``fuzz`` list), report.html
    and summary.md; ``out``: where the cases and repro scripts were written; ``base``: a suite run's
    results to add them to."""
    write_fuzz_documents(env, [run_document(run, out) for run in runs], directory, base, partial, interrupted)


def write_fuzz_documents(env: Environment, documents: list[dict], directory: Path, base: Results | None = None,
                         partial: bool = False, interrupted: bool = False) -> None:
    """The reports of runs as :func:`.output.run_document` gives them (pytest's workers send these).
    ``base`` is left as it is: a checkpoint of a running fuzz writes these again and again."""
    from ..report.html import render_html
    from ..report.known import report_model
    from ..report.results import render_markdown

    results = base or Results(env, None)
    document = results.document(partial=partial, interrupted=interrupted)
    document["items"] = sorted(document["items"] + [r for run in documents for r in run["records"]],
                               key=lambda r: (r["id"], r["backend"]))
    document["summary"] = dict(sorted(Counter(r["outcome"] for r in document["items"]).items()))
    document["catalogue"] = catalogue_of(document["items"])
    document["fuzz"] = [run["section"] for run in documents]
    write_atomically(directory / RESULTS_FILE, json.dumps(document, allow_nan=False, default=numpy_scalars))
    clusters, advice = report_model(document)
    write_atomically(directory / HTML_FILE, render_html(document, clusters, advice))
    write_atomically(directory / MARKDOWN_FILE, render_markdown(document, clusters, advice))

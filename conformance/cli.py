"""The `conformance` command: tools around the suite (the suite itself runs under pytest).

    conformance registry [--output FILE]           render the open questions (cases/ambiguities.md)
    conformance report RESULTS.json... -o DIR      render report.html and summary.md, backends side by side
    conformance compare OLD.json NEW.json          what changed between two runs; exit 1 on a regression
    conformance backends                           the registered backends and whether they load here
    conformance setup ort-js                       install what a backend needs outside pip (npm packages)
    conformance export DIR                         every item in the ONNX backend-test layout
    conformance expectations RESULTS.json          draft a backend's expectations file from a run
    conformance lock --check | --update            compare the derived expectations with cases/derived.lock, or rewrite it
    conformance coverage [--output FILE]           behaviour classes x path selectors, and the depth axes (docs/coverage.md)
    conformance fuzz --backend=NAME [--budget N]   differential fuzzing; shrinks and clusters what it finds
    conformance repro ITEM_ID --backend=NAME       the standalone, upstream-ready script of one item
    conformance sweep SWEEP.yaml                   the suite on every release of each runtime; the scoreboard
    conformance bisect ITEM_ID --sweep SWEEP.yaml  the first release of a sweep where an item's outcome changes
    conformance scoreboard RESULTS.json... -o DIR  the scoreboard of runs of several releases
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .backends import load_backend, registered_backends
from .export import export
from .fuzz import command as fuzz_command
from . import repro
from .sweep import command as sweep_command
from .judge import lock
from .judge.expectations import file_names
from .load.cases import CaseError, bundled_case_dir, escaped
from .report.compare_runs import compare_runs, render_comparison
from .report.expectations_draft import draft_expectations
from .report.html import render_html
from .report.known import report_model
from .docgen.registry_page import render
from .report.results import ResultsError, as_backend, load, render_markdown, uneven_items
from . import __version__
from .atomic import write_atomically
from .report.writer import HTML_FILE, MARKDOWN_FILE


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_outputs(args)
        return _command(args)
    except (ResultsError, OutputError) as e:  # a usage or input error, told apart from a regression (exit 1)
        print(f"conformance {args.command}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a write that fails midway (a full disk): one line, never a regression's exit code
        print(f"conformance {args.command}: cannot write {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"conformance {args.command}: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)
    _add_report_commands(commands)
    _add_tool_commands(commands)
    return parser


def _version() -> str:
    """The suite's version, the Python it runs on and where its bundled cases are, in one line."""
    return f"conformance {__version__} (python {sys.version.split()[0]}; the cases in {bundled_case_dir()})"


def _add_report_commands(commands) -> None:
    """The commands that read runs: report, compare, expectations, scoreboard."""
    report = commands.add_parser("report", help="render results.json files as one HTML report and Markdown summary")
    report.add_argument("results", type=Path, nargs="+", help="results.json files (one per backend, or any)")
    report.add_argument("-o", "--output", type=Path, required=True, help="directory for report.html and summary.md")

    diff = commands.add_parser("compare", help="compare two runs; exit 1 on a regression")
    diff.add_argument("old", type=Path)
    diff.add_argument("new", type=Path)
    diff.add_argument("--markdown", type=Path, help="also write the comparison here")
    diff.add_argument("--as", dest="as_name", metavar="NAME",
                      help="compare two backends (my runtime against ONNX Runtime): each run's one backend taken as NAME")

    board = commands.add_parser("scoreboard", help="the scoreboard (index.html, scoreboard.json) of runs of several releases")
    board.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json|CELL_DIR",
                       help="runs' results.json, or a sweep's cell directories (a cell that did not run is listed as such)")
    board.add_argument("-o", "--output", type=Path, required=True, help="directory to write into")
    board.add_argument("--history", type=Path, default=None, metavar="FILE",
                       help="append the runs' outcome counts to FILE (JSON lines) and plot the nightlies")
    board.add_argument("--expectations", type=Path, default=None, metavar="DIR",
                       help="expectations files whose reasons and links the causes' examples take")
    drafted = commands.add_parser("expectations", help="draft an expectations file from a run's results.json")
    drafted.add_argument("results", type=Path)
    drafted.add_argument("--backend", help="whose expectations (default: the run's only backend)")
    drafted.add_argument("-o", "--output", type=Path, help="write here instead of standard output")
    drafted.add_argument("--into", type=Path, metavar="DIR",
                         help="write DIR/<name>.yaml, the file a run with --expectations DIR reads for this backend "
                              "(a module:Class backend's is its class name)")


def _add_tool_commands(commands) -> None:
    """The commands that run or write things: registry, backends, setup, export, lock, coverage, fuzz,
    repro, sweep."""
    registry = commands.add_parser("registry", help="render the ambiguity registry as Markdown")
    registry.add_argument("--cases", type=Path, default=bundled_case_dir(), help="case directory (default: bundled)")
    registry.add_argument("--output", type=Path, help="write here instead of standard output")

    available = commands.add_parser("backends", help="list the registered backends and whether they load here")
    available.add_argument("--names", action="store_true", help="print only the names that load, comma-separated")

    installed = commands.add_parser("setup", help="install what a backend needs beyond pip, in a per-user cache")
    installed.add_argument("backend", choices=["ort-js"])
    installed.add_argument("--force", action="store_true", help="install again, even where the installed files are as recorded")

    exported = commands.add_parser("export", help="write every item in the ONNX backend-test layout")
    exported.add_argument("target", type=Path)
    exported.add_argument("--cases", type=Path, default=bundled_case_dir(), help="case directory (default: bundled)")
    exported.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")

    _add_lock_command(commands)
    covered = commands.add_parser("coverage", help="behaviour classes crossed with path selectors, as Markdown")
    covered.add_argument("--cases", type=Path, default=bundled_case_dir(), help="case directory (default: bundled)")
    fuzz_command.add_parser(commands)
    repro.add_parser(commands)
    sweep_command.add_parsers(commands)


class OutputError(ValueError):
    """An output path that cannot be written (one line)."""


def _check_outputs(args: argparse.Namespace) -> None:
    """Every path a command will write, checked before any work: a directory where a file goes,
    a file where a directory goes, a parent that cannot be made or written."""
    directories = {"report": ["output"], "export": ["target"], "fuzz": ["out", "report"], "expectations": ["into"],
                   "sweep": ["out"], "bisect": ["out"], "scoreboard": ["output"]}
    files = {"compare": ["markdown"], "registry": ["output"], "expectations": ["output"]}
    for names, directory in ((directories, True), (files, False)):
        for name in names.get(args.command, []):
            if getattr(args, name) is not None:
                _writable(getattr(args, name), directory)


def _writable(path: Path, directory: bool) -> None:
    if directory and path.exists() and not path.is_dir():
        raise OutputError(f"{path}: exists and is not a directory")
    if not directory and path.is_dir():
        raise OutputError(f"{path}: is a directory")
    folder = path if directory else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{path}: cannot be created ({e.strerror})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{folder}: not writable")


def _command(args: argparse.Namespace) -> int:
    if args.command == "lock":
        return lock.check() if args.check else lock.update()
    if args.command == "fuzz":
        return fuzz_command.main(args)
    if args.command == "repro":
        return repro.main(args)
    if args.command in ("sweep", "bisect"):
        return sweep_command.main(args)
    if args.command == "scoreboard":
        from .sweep.cells import read_cells
        results, not_run = read_cells(args.results)
        from .report.scoreboard import write_scoreboard
        print(f"wrote {write_scoreboard(results, args.output, not_run, args.history, args.expectations)}")
        return 0
    if args.command == "coverage":
        from .docgen.axes import render as render_axes
        from .docgen.coverage import render as render_coverage
        sys.stdout.write(render_coverage(args.cases) + "\n" + render_axes(args.cases))
        return 0
    if args.command == "expectations":
        return _draft(args.results, args.backend, args.output, args.into)
    if args.command == "export":
        return _export(args.cases, args.target, args.seed)
    if args.command == "backends":
        return _backends(args.names)
    if args.command == "setup":
        from .backends.ort_js_setup import setup
        return setup(args.force)
    if args.command == "registry":
        page = render(args.cases)
        if args.output:
            write_atomically(args.output, page)
        else:
            sys.stdout.write(page)
        return 0
    if args.command == "report":
        return _report(args.results, args.output)
    return _compare(args)


def _report(results: list[Path], output: Path) -> int:
    if len({path.resolve() for path in results}) < len(results):  # its items would count twice
        raise ResultsError("a results file is named twice: name each run once")
    document = load(results)
    uneven = uneven_items(document)
    if uneven:
        print(f"conformance report: warning: {uneven}", file=sys.stderr)
    clusters, advice = report_model(document)
    write_atomically(output / HTML_FILE, render_html(document, clusters, advice))
    write_atomically(output / MARKDOWN_FILE, render_markdown(document, clusters, advice))
    print(f"wrote {output / HTML_FILE} and {output / MARKDOWN_FILE}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    old, new = load([args.old]), load([args.new])
    if args.as_name:
        old, new = as_backend(old, args.as_name, args.old), as_backend(new, args.as_name, args.new)
    comparison = compare_runs(old, new)
    if comparison.compared == 0:  # "0 items in both runs" and exit 0 would read as no regression
        backends = {side: sorted({r["backend"] for r in run["items"]}) for side, run in (("old", old), ("new", new))}
        raise ResultsError(f"the runs share no item (backend and id): nothing to compare (backends: old "
                           f"{', '.join(backends['old']) or 'none'}, new {', '.join(backends['new']) or 'none'})")
    text = render_comparison(old, new, comparison)
    if args.markdown:
        write_atomically(args.markdown, text)
    sys.stdout.write(text)
    return 1 if comparison.regressions else 0


def _export(cases: Path, target: Path, seed: int) -> int:
    try:
        counts, errors = export(cases, target, seed)
    except CaseError as e:  # the registry
        print(e, file=sys.stderr)
        return 2
    for error in errors:
        print(error, file=sys.stderr)
    print(f"wrote {sum(counts.values())} tests to {target}: "
          + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) + "; see manifest.json"
          + (f"; {len(errors)} malformed case files left out (above)" if errors else ""))
    return 1 if errors else 0


def _add_lock_command(commands) -> None:
    locked = commands.add_parser("lock", help="check or rewrite the frozen derived expectations (cases/derived.lock)")
    action = locked.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1, with a diff, where the reference now derives otherwise")
    action.add_argument("--update", action="store_true",
                        help="rewrite the lock, once the naive loops of reference_backend/naive.py agree on every changed item")


def _backends(names_only: bool) -> int:
    loaded = []
    for name, target in sorted(registered_backends().items()):
        try:
            backend = load_backend(name)
        except Exception as e:  # noqa: BLE001 - a backend that does not load is reported, not fatal
            if not names_only:
                print(escaped(f"{name:12} {target:45} not available: {(str(e).splitlines() or [''])[0]}"))
            continue
        loaded.append(name)
        if not names_only:
            options = f" (options: {backend.choices})" if hasattr(backend, "choices") else ""
            print(escaped(f"{name:12} {target:45} {backend.name} {backend.version}{options}"))
    if names_only:
        print(",".join(loaded))
    return 0


def _draft(results: Path, backend: str | None, output: Path | None, into: Path | None = None) -> int:
    document = load([results])
    names = [b["name"] for b in document["environment"]["backends"]]
    if backend is None and len(names) != 1:
        print(f"the run has backends {', '.join(names)}: choose one with --backend", file=sys.stderr)
        return 2
    try:
        text = draft_expectations(document, backend or names[0])
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if into is not None:  # the name the run looks for: its backend's, a module:Class backend's class
        named = file_names(backend or names[0])
        if not named:
            print(f"--into: the backend's name {escaped(repr((backend or names[0])[:80]))} cannot name a file in "
                  f"{into} (a separator, a leading dot or a control character): give -o FILE", file=sys.stderr)
            return 2
        output = into / f"{named[0]}.yaml"
    if output:
        write_atomically(output, text)
        print(f"wrote {output}: review each reason before you commit it")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The `conformance` command: tools around the suite (the suite itself runs under pytest)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cases import bundled_case_dir
from .registry_page import render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conformance", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    registry = commands.add_parser("registry", help="render the ambiguity registry as Markdown")
    registry.add_argument("--cases", type=Path, default=bundled_case_dir(), help="case directory (default: bundled)")
    registry.add_argument("--output", type=Path, help="write here instead of standard output")
    args = parser.parse_args(argv)
    page = render(args.cases)
    if args.output:
        args.output.write_text(page)
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

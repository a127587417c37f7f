"""`conformance` (and `python -m conformance`): the command of conformance/cli.py, with its
imports inside the guard, so that a Ctrl-C while onnx and numpy load is one line and exit 130
like a Ctrl-C at any later moment, never a traceback."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        from .cli import main as command

        return command(argv)
    except KeyboardInterrupt:
        words = sys.argv[1:] if argv is None else argv
        print(f"conformance {words[0] if words else ''}: interrupted".replace(" :", ":"), file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

"""Fuzz throughput per backend: configurations judged per second of search (`conformance fuzz`
without shrinking, each backend in its isolated child process as the command runs it).

    python -m bench.fuzz_benchmark [--budget N] [--backends reference,ort,...] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

from conformance.load.cases import bundled_case_dir, load_registry
from conformance.fuzz.engine import Fuzzer
from conformance.backends.isolation.runner import started
from conformance.fuzz.space import all_targets

BACKENDS = ("reference", "ort", "openvino", "onnx-reference", "tract")


def measure(spec: str, budget: int, seed: int = 0) -> dict:
    backend, runner = started(spec, 60, 8192)  # as the command does: the child starts, then the backend loads here
    began = time.monotonic()
    try:
        run = Fuzzer(runner, load_registry(bundled_case_dir()), all_targets(), seed=seed, budget=budget,
                     shrink=False).fuzz()
    finally:
        runner.close()
    wall = time.monotonic() - began
    return {"backend": f"{backend.name} {backend.version}", "configurations": run.judged, "wall_s": wall,
            "per_second": run.judged / wall, "clusters": len(run.clusters)}


def table(rows: list[dict], budget: int) -> str:
    lines = [f"Fuzz throughput, {budget} configurations per backend, seed 0, no shrinking "
             f"({platform.processor() or platform.machine()}, Python {platform.python_version()}):", "",
             "| backend | configurations | wall s | configurations/s | failure clusters |", "|---|---|---|---|---|"]
    lines += [f"| {r['backend']} | {r['configurations']} | {r['wall_s']:.1f} | {r['per_second']:.1f} | {r['clusters']} |"
              for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    rows = []
    for spec in args.backends.split(","):
        try:
            rows.append(measure(spec, args.budget))
        except ImportError as e:
            print(f"{spec}: not installed ({e})", file=sys.stderr)
    text = table(rows, args.budget)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What writing the report costs a run on a busy machine: the whole suite against ONNX Runtime
(`pytest conformance --backend=ort -n 2`), with `--report` and without, while busy loops share the
cores (ten of them on two cores: a load near 12, where the run once stalled on rewriting its
results file per record), and the same pair on a quiet machine. The goal: with `--report` at most
1.15 times as long as without.

    python -m bench.report_load_benchmark [--busy 10] [--sample]

A first run, untimed, warms the user's cache (the expanded items and their oracles), as a run the
day after its first does; then the two are timed in turn, loaded first. `--sample` times the
covering sample instead (a first look: about a twentieth of the items)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 1.15


def timed(report: Path | None, sample: bool) -> float:
    command = [sys.executable, "-m", "pytest", "conformance", "--backend=ort", "-n", "2", "-q",
               "--expectations", "expectations", *(["--report", str(report)] if report else []),
               *(["--conformance-sample"] if sample else [])]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the run failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return time.monotonic() - started


def pair(sample: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as directory:
        return timed(None, sample), timed(Path(directory) / "report", sample)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy", type=int, default=10, help="busy loops beside the loaded runs (default 10)")
    parser.add_argument("--sample", action="store_true", help="time --conformance-sample instead of every item")
    args = parser.parse_args()
    timed(None, args.sample)  # warms the cache
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        loaded = pair(args.sample)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    quiet = pair(args.sample)
    for name, (without, with_report) in (("loaded", loaded), ("quiet", quiet)):
        ratio = with_report / without
        print(f"{name:>6}: without --report {without:7.1f} s, with {with_report:7.1f} s: {ratio:.2f} "
              f"({'meets' if ratio <= GOAL else 'misses'} the goal of {GOAL})")
    return 0 if max(w / o for o, w in (loaded, quiet)) <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

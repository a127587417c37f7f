"""The plugin's command-line options (``pytest --help``: "ONNX max-pooling conformance suite")."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..load.limits import NAMES as LIMIT_NAMES

DEFAULT_SEED = 0
DEFAULT_TIMEOUT_S = 60
DEFAULT_MEMORY_LIMIT_MIB = 8192
# Each process's seconds of diagnosis in a run: ONNX Runtime's whole suite spends about 10 s of it a
# worker (its 1,139 listed failures); a backend wrong on every item would spend an hour.
DIAGNOSIS_BUDGET_S = 600.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "ONNX max-pooling conformance suite")
    group.addoption("--backend", default="reference",
                    help="backend(s) under test, comma-separated: names registered in the conformance.backends "
                         "entry-point group (reference, ort) or package.module:ClassName (default: reference)")
    group.addoption("--cases", type=Path, default=None,
                    help="run the case files in this directory instead of the bundled ones")
    group.addoption("--report", type=Path, default=None,
                    help="write DIR/results.json, DIR/report.html and DIR/summary.md")
    group.addoption("--expectations", type=Path, default=None,
                    help="known failures: a file, or a directory holding <backend>.yaml per backend")
    group.addoption("--seed", type=int, default=DEFAULT_SEED,
                    help=f"seed of the random inputs (default {DEFAULT_SEED})")
    group.addoption("--isolation", choices=("process", "none"), default="process",
                    help="run the backend in a child process, so that a crash or hang costs one item "
                         "(default), or in the test process")
    # Generic names (--timeout: pytest-timeout's) would collide with other plugins: ours are prefixed.
    group.addoption("--conformance-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                    help=f"seconds an isolated backend may take per item (default {DEFAULT_TIMEOUT_S})")
    group.addoption("--conformance-memory-limit", type=int, default=DEFAULT_MEMORY_LIMIT_MIB, metavar="MIB",
                    help=f"address-space limit of the isolated backend's process, 0 for none "
                         f"(default {DEFAULT_MEMORY_LIMIT_MIB})")
    group.addoption("--conformance-diagnosis-budget", type=float, default=DIAGNOSIS_BUDGET_S, metavar="S",
                    help=f"seconds each process may spend naming failures by defect model (default "
                         f"{DIAGNOSIS_BUDGET_S:.0f}); 0 turns diagnosis off; past it failures are left undiagnosed, "
                         "and the report says how many")
    group.addoption("--conformance-explain-budget", type=float, default=None, metavar="S",
                    help="seconds the run may spend, at its end, explaining by experiment the failure lines no defect "
                         "model names (probe models run on the backend: what decides each failure); default a quarter "
                         "of the run's own time; 0 turns explanation off. Only with --report")
    group.addoption("--conformance-fuzz", type=int, default=None, metavar="BUDGET",
                    help="instead of the case files, fuzz each backend with BUDGET configurations (conformance fuzz)")
    group.addoption("--conformance-fuzz-out", type=Path, default=None, metavar="DIR",
                    help="with --conformance-fuzz: write each cluster's case and repro script to DIR/<backend>/")
    group.addoption("--conformance-id", action="append", default=[], metavar="ID",
                    help="run exactly the item of this id (Op-version/case[type], as every report names it; "
                         "ID@backend for one backend of several), repeatable; --conformance-id=@FILE reads ids from FILE, one a line. "
                         "Only the case files that hold them are expanded")
    group.addoption("--conformance-rerun-crashes", type=int, default=0, metavar="N",
                    help="run a crashed item again, up to N more times, each in a fresh process: a crash that does "
                         "not recur is still a crash, said to be 'k of n runs' (default 0)")
    group.addoption("--conformance-sample", action="store_true", default=False,
                    help="run a covering subset (about a twentieth of the items): every behaviour class with every "
                         "path-selector value at every operator version, every version with every element type, "
                         "every case; a first signal for a runtime too slow for the whole suite")
    group.addoption("--conformance-shard", default=None, metavar="I/N",
                    help="run the I-th of N deterministic shards of the items (1 <= I <= N), split by item id, "
                         "so that N machines or CI jobs run the suite between them")
    group.addoption("--conformance-label", default=None, metavar="LABEL",
                    help="name the run (ort@1.15.1): every record and the report carry it, and reports that merge "
                         "runs keep each label's results apart (conformance sweep labels its cells so)")
    group.addoption("--conformance-limit", action="append", default=[], metavar="NAME=N",
                    help="raise (or lower) a budget of case-file reading, repeatable: "
                         + ", ".join(LIMIT_NAMES) + " (docs/case-format.md: budgets)")

"""Sessions: `nox` runs the project's tests and the suite against the reference backend.

    nox -s lint                   ruff, mypy and lint-imports (the layers), as .ci/run runs them
    nox -s tests                  the project's own tests
    nox -s conformance -- ort     the suite against a backend (default: reference), report in reports/<backend>/
    nox -s nightly                every installed backend (ort also without optimizations, ort-js on each
                                  of its eps once `conformance setup ort-js` has run), report in
                                  reports/<date>/, compared with the last one
    nox -s example                regenerate the example report in docs/example/ (ort, openvino and ort-js's WebGPU build
                                  on a cut of the cases)
    nox -s oldest                 the own tests on Python 3.10 with every dependency at its lower bound
    nox -s newest                 the own tests (fast tier) on Python 3.12, the newest the suite supports
    nox -s bench                  time the reference backend against ONNX Runtime and onnx.reference,
                                  the fuzz's throughput per backend, and the harness's four figures
                                  (suite / floor, tests, fuzz, repro line) as ratios against their goals
"""

import datetime
from pathlib import Path

import nox

nox.options.sessions = ["lint", "tests", "conformance"]

# The lower bounds of pyproject.toml, installed exactly by `nox -s oldest`.
OLDEST = [
    "onnx==1.17.0", "numpy==1.26.4", "ml_dtypes==0.5.0", "PyYAML==6.0", "jsonschema==4.18.0",
    "pytest==8.1.1", "pytest-xdist==3.5.0", "onnxruntime==1.21.0", "tract==0.23.9", "openvino==2026.4.0",
    "hypothesis==6.100.0", "pytest-timeout==2.3.1",
]  # the lint tools are left out: `nox -s lint` runs them, at the lower bounds of the test extra
REPORTS = Path("reports")
EXPECTATIONS = Path("expectations")  # each backend's known failures
EXAMPLE = Path("docs") / "example"
# maxpool_paths.yaml left out: its 1,163 MaxPool-12 items (the kernels' branches) would more than double the file
EXAMPLE_CUT = "(MaxPool-12/ or MaxUnpool-11/) and not nhwc and not maxpool_paths"


@nox.session
def lint(session: nox.Session) -> None:
    """The conventions as tools, configured in pyproject.toml: style and dead code (ruff), types
    (mypy on conformance/ and reference_backend/), and the one-way layers (lint-imports)."""
    session.install("-e", ".[test]")
    session.run("ruff", "check", ".")
    session.run("mypy")
    session.run("lint-imports")


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("pytest", "tests", "-n", "auto", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    backend = session.posargs[0] if session.posargs else "reference"
    session.install("-e", ".[ort]")
    session.run("pytest", "conformance", f"--backend={backend}", "-n", "auto", f"--report=reports/{backend}",
                *session.posargs[1:])


@nox.session
def nightly(session: nox.Session) -> None:
    """Every backend that loads, against the known-failure lists; then what changed since last time,
    and the scoreboard with the history of every nightly."""
    session.install("-e", ".[all,sweep]")
    backends = session.run("conformance", "backends", "--names", silent=True).strip().split(",")
    if "ort" in backends:  # ONNX Runtime's NCHWc kernels run only from optimization level `layout` up
        backends.append("ort[optimization=disabled]")
    if "ort-js" in backends:  # loads once `conformance setup ort-js` has run; its default ep is webgpu
        backends += ["ort-js[ep=cpu]", "ort-js[ep=wasm]"]
    today = REPORTS / datetime.date.today().isoformat()
    session.run("pytest", "conformance", f"--backend={','.join(backends)}", "-n", "auto", "--expectations",
                str(EXPECTATIONS), f"--report={today}", success_codes=[0, 1])
    earlier = sorted(p for p in REPORTS.glob("2*-*-*") if p.name < today.name and (p / "results.json").exists())
    if earlier:
        session.run("conformance", "compare", str(earlier[-1] / "results.json"), str(today / "results.json"),
                    "--markdown", str(today / "compare.md"), success_codes=[0, 1])
    # the scoreboard of tonight's backends, with every nightly's counts plotted beside them
    session.run("conformance", "scoreboard", str(today / "results.json"), "-o", str(REPORTS / "scoreboard"),
                "--history", str(REPORTS / "history.jsonl"))


@nox.session
def sweep(session: nox.Session) -> None:
    """Every minor release of ONNX Runtime (from 1.15) and OpenVINO (from 2023.0), a cell each, and
    their scoreboard (reports/sweep/scoreboard/index.html); cells that ran on this suite are reused."""
    session.install("-e", ".[sweep]")
    session.run("conformance", "sweep", "sweeps/releases.yaml", "--out", "reports/sweep",
                "--history", "reports/sweep/history.jsonl", *session.posargs, success_codes=[0, 1])


@nox.session
def example(session: nox.Session) -> None:
    """The example report: ONNX Runtime on the CPU, OpenVINO and ONNX Runtime's WebGPU build (whose
    layout transformer runs ai.onnx MaxPool on its NHWC kernels) side by side, raw, on a cut of the
    cases (ai.onnx MaxPool-12 but its paths file, and MaxUnpool-11: every element type, Indices, the failures of each)
    that keeps results.json near 3 MB; the tests read it as a real run."""
    session.install("-e", ".[ort,openvino]")
    session.run("conformance", "setup", "ort-js")
    session.run("pytest", "conformance", "--backend=ort,openvino,ort-js[ep=webgpu]", "-n", "auto", "-k", EXAMPLE_CUT,
                f"--report={EXAMPLE}", success_codes=[0, 1])


@nox.session(python="3.10")
def oldest(session: nox.Session) -> None:
    session.install(*OLDEST)
    session.install("--no-deps", "-e", ".")
    session.run("pytest", "tests", "-n", "auto", *session.posargs)
    session.run("pytest", "conformance", "--backend=reference", "-n", "auto")
    # onnxruntime 1.21 fails more items than today's (it crashes on a zero stride, for one):
    # the suite must run against it to the end, not pass.
    session.run("pytest", "conformance", "--backend=ort", "-n", "auto", success_codes=[0, 1])


@nox.session(python="3.12")
def newest(session: nox.Session) -> None:
    """The newest Python the suite supports (a converter may need it): the fast tier, as the README runs it."""
    session.install("-e", ".[test]")
    session.run("conformance", "setup", "ort-js")
    session.run("pytest", "tests", "-n", "auto", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmark tables of the README (a quarter of an hour, most of it onnx.reference and the
    project's tests): the backends on large max poolings, the fuzz's configurations per second per
    backend, then the harness against its floors (bench/harness_benchmark.py)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "bench.benchmark", *session.posargs)
    session.run("python", "-m", "bench.fuzz_benchmark")
    session.run("python", "-m", "bench.harness_benchmark", "--tests")

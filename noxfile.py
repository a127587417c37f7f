"""Sessions: `nox` runs the project's tests and the suite against the reference backend.

    nox -s tests                  the project's own tests
    nox -s conformance -- ort     the suite against a backend (default: reference), report in reports/<backend>/
    nox -s oldest                 the own tests on Python 3.10 with every dependency at its lower bound
"""

import nox

nox.options.sessions = ["tests", "conformance"]

# The lower bounds of pyproject.toml, installed exactly by `nox -s oldest`.
OLDEST = [
    "onnx==1.17.0", "numpy==1.26.4", "ml_dtypes==0.5.0", "PyYAML==6.0", "jsonschema==4.18.0",
    "pytest==8.1.1", "pytest-xdist==3.5.0", "onnxruntime==1.21.0", "hypothesis==6.100.0",
]


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


@nox.session(python="3.10")
def oldest(session: nox.Session) -> None:
    session.install(*OLDEST)
    session.install("--no-deps", "-e", ".")
    session.run("pytest", "tests", "-n", "auto", *session.posargs)
    session.run("pytest", "conformance", "--backend=ort", "-n", "auto")

"""Each import-linter contract of pyproject.toml holds its line: in a copy of the packages with one
forbidden import injected, `lint-imports` fails on that contract and keeps the others."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_NAMES = {c["id"]: c["name"] for c in
                  tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
# contract id -> (file, the import that breaks it)
INJECTIONS = {
    "pipeline": ("conformance/report/html.py", "import conformance.cli"),  # a layer reaching up
    "siblings": ("conformance/judge/analysis/where.py", "import conformance.judge.verdict"),  # verdict imports where: a cycle
    "runner": ("conformance/judge/oracle.py", "import conformance.backends.isolation.wire"),
    "oracle": ("reference_backend/backend.py", "import conformance.judge.oracle"),
    "specification": ("reference_backend/naive.py", "import reference_backend.maxpool"),
    "oracle-apart": ("conformance/backends/ort.py", "import reference_backend"),
    "analysis": ("conformance/report/causes.py", "from conformance.judge.analysis.catalogue import BY_NAME"),
}


def _lint(tree: Path) -> subprocess.CompletedProcess:
    linter = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    return subprocess.run([linter, "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for package in ("conformance", "reference_backend"):
        shutil.copytree(ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__", "ort_js_npm"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_every_contract_has_an_injection():
    assert set(INJECTIONS) == set(CONTRACT_NAMES)


def test_the_packages_as_they_are_keep_every_contract(tmp_path):
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0 and f"{len(INJECTIONS)} kept, 0 broken" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("contract", sorted(INJECTIONS))
def test_a_forbidden_import_breaks_its_contract(tmp_path, contract):
    tree = _copy(tmp_path)
    file, line = INJECTIONS[contract]
    with open(tree / file, "a") as f:
        f.write(f"\n{line}  # injected by tests/meta/test_import_contracts.py\n")
    result = _lint(tree)
    said = " ".join(result.stdout.split())  # its lines are wrapped to the terminal's width
    assert result.returncode != 0 and f"{CONTRACT_NAMES[contract]} BROKEN" in said, said[-2000:]
    assert f"{len(INJECTIONS) - 1} kept, 1 broken" in said, said[-2000:]



def test_the_repro_scripts_cannot_derive_expected_values(tmp_path):
    """The scripts are fed with the oracle's kept values: the judge beside them is out of their reach."""
    tree = _copy(tmp_path)
    with open(tree / "conformance/scripts/standalone.py", "a") as f:
        f.write("\nfrom conformance.judge.verdict import expected_outputs  # injected\n")
    said = " ".join(_lint(tree).stdout.split())
    assert f"{CONTRACT_NAMES['pipeline']} BROKEN" in said and f"{len(INJECTIONS) - 1} kept, 1 broken" in said, said[-2000:]

"""The units stay readable (CONTRIBUTING.md): no function of the product over 60 lines, no module
over 600. A unit that grows past them is split by what its parts do, never exempted."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = [ROOT / "conformance", ROOT / "reference_backend"]
FUNCTION_LINES, MODULE_LINES = 60, 600


def _modules() -> list[Path]:
    return sorted(path for package in PRODUCT for path in package.rglob("*.py"))


def test_no_function_of_the_product_is_over_60_lines():
    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in _modules() for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > FUNCTION_LINES]
    assert long == []


def test_no_module_of_the_product_is_over_600_lines():
    long = [f"{path.relative_to(ROOT)} ({n} lines)" for path in _modules()
            if (n := len(path.read_text().splitlines())) > MODULE_LINES]
    assert long == []

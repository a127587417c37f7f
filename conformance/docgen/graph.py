"""The import graph of the suite, package by package, as docs/architecture.md shows it (generated:
tests/test_docs_generated.py keeps the page's copy equal to ``render()``).

    python -m conformance.docgen.graph
"""

from __future__ import annotations

import grimp

# The packages from the top of the pipeline to its ground, as the layers contract orders them.
ORDER = ("__main__", "pytest_entry", "plugin", "cli", "explain", "fuzz", "export", "repro", "sweep", "docgen", "report", "scripts", "judge",
         "backends", "expand", "load", "semantics", "outcomes", "atomic", "reference_backend")


def _unit(module: str) -> str:
    parts = module.split(".")
    return "reference_backend" if parts[0] == "reference_backend" else ".".join(parts[1:2])


def package_graph() -> dict[str, set[str]]:
    """Each package (or top-level module) of the suite -> those it imports, its version aside."""
    graph = grimp.build_graph("conformance", "reference_backend", cache_dir=None)
    imports: dict[str, set[str]] = {unit: set() for unit in ORDER}
    for module in graph.modules:
        source = _unit(module)
        for imported in graph.find_modules_directly_imported_by(module):
            target = _unit(imported)
            if source and target and target != source:  # "" is the root package: its __version__
                imports.setdefault(source, set()).add(target)
    return imports


def render() -> str:
    imports = package_graph()
    units = [u for u in ORDER if u in imports] + sorted(set(imports) - set(ORDER))
    lines = []
    for unit in units:
        found = [u for u in units if u in imports[unit]]
        lines.append(f"{unit:<18} -> " + (", ".join(found) if found else "(nothing of the suite)"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")

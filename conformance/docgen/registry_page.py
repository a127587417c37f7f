"""Render the ambiguity registry as a Markdown page, with the cases that run into each entry."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from ..expand.items import load_items
from ..judge.ambiguities import detected
from ..load.cases import Ambiguity, load_registry


def tagged_cases(case_dir: Path, registry: dict[str, Ambiguity], seed: int = 0) -> dict[str, Counter]:
    """For each entry, the number of items per case (file: case name without its instance)."""
    found: dict[str, Counter] = defaultdict(Counter)
    for item in load_items(case_dir, registry):
        for key in detected(item, item.case_inputs(seed), registry):
            found[key][f"{item.case.file.name}: {item.case.name.split('/')[0]}"] += 1
    return found


def render(case_dir: Path) -> str:
    registry = load_registry(case_dir)
    tagged = tagged_cases(case_dir, registry)
    lines = [
        "# Open questions of the max-pooling documents",
        "",
        "Rendered from [`ambiguities.yaml`](ambiguities.yaml) by `conformance registry`; do not edit.",
        "Items that run into an `open` entry are `divergent` on every backend: the reading a backend",
        "showed is recorded, never judged. A `resolved` entry is settled by the documents themselves.",
        "Line numbers refer to the seed documents.",
        "",
        "| id | question | status | items |",
        "|---|---|---|---|",
    ]
    for key, entry in registry.items():
        lines.append(f"| [`{key}`](#{key}) | {entry.title} | {entry.status} | {sum(tagged[key].values())} |")
    for key, entry in registry.items():
        raw = entry.entry
        lines += ["", f"## {key}", "", f"**{entry.title}** ({entry.status}; {', '.join(raw['versions'])})", ""]
        for text in raw["texts"]:
            where = f"{text['document']}:{text['line']}" if "line" in text else text["document"]
            lines.append(f"> {text['quote']}  \n> — {where}")
            lines.append("")
        lines.append("Readings:")
        lines.append("")
        for name, description in entry.interpretations.items():
            marker = " **(reference backend)**" if name == entry.reference else ""
            lines.append(f"- `{name}`{marker}: {description}")
        lines += ["", raw["explanation"]]
        if "resolution" in raw:
            lines += ["", f"Resolution: {raw['resolution']}"]
        if raw.get("links"):
            lines += ["", "See: " + ", ".join(raw["links"])]
        lines += ["", "Cases (items at seed 0):", ""]
        if tagged[key]:
            lines += [f"- {case}: {count}" for case, count in sorted(tagged[key].items())]
        else:
            lines.append("- none")
    return "\n".join(lines) + "\n"

"""The generated table of docs/status.md: each runtime's known failures, counted from its
expectations file, the list a run checks (a listed item that passes is an ``xpass`` and fails the
run), so the table says what the runtime gets wrong today without a run.

    python -m conformance.docgen.status_page [EXPECTATIONS_DIR] > table.md

``tests/test_status_page.py`` keeps docs/status.md's copy equal to it.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from ..judge.expectations import SKIPS_SUFFIX
from ..load.cases import read_yaml
from ..outcomes import BACKEND_FAILURES

EXPECTATIONS_DIR = Path(__file__).resolve().parents[2] / "expectations"


def render(directory: Path = EXPECTATIONS_DIR) -> str:
    """One row per expectations file: the runtime, the version it was made with, its entries (one
    per cause, or per group of items) by outcome, and the items its skips file keeps from running."""
    columns = [o.value for o in BACKEND_FAILURES]
    lines = ["| runtime | made with | entries | " + " | ".join(columns) + " | items never run |",
             "|---|---|---:|" + "---:|" * len(columns) + "---:|"]
    for file in sorted(p for p in directory.glob("*.yaml") if not p.name.endswith(SKIPS_SUFFIX)):
        listed = read_yaml(file, "expectations.schema.json").data
        counts = Counter(entry["outcome"] for entry in listed["entries"])
        skips = file.with_name(file.name.removesuffix(".yaml") + SKIPS_SUFFIX)
        never_run = len(read_yaml(skips, "skips.schema.json").data["entries"]) if skips.exists() else 0
        link = f"[`{listed['backend']}`](../expectations/{quote(file.name)})"
        lines.append(f"| {link} | {listed.get('tested_with', '-')} | {len(listed['entries'])} | "
                     + " | ".join(str(counts.get(c, 0)) for c in columns) + f" | {never_run} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(Path(sys.argv[1]) if len(sys.argv) > 1 else EXPECTATIONS_DIR))

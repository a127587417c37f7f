"""Two runs compared: what a nightly job reports between yesterday's results and today's.

A regression is an item that now fails, errors, crashes, times out or passes unexpectedly
(`xpass`) where it did not, or that passed and is now `unsupported`. Fixes are the reverse.
An item that was `unsupported` (the old run could not run it at all) and now runs is newly
supported, whatever its outcome now: never a fix, never a regression, since nothing of it was
judged before. Changed divergences are open questions a backend now reads differently.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..outcomes import FAILING_WORDS, Outcome
from .causes import failure_clusters
from .record import RunDocument
from .results import observed_reading, shorten



@dataclass
class Change:
    backend: str
    id: str
    op_version: str
    old: str | None  # outcome, None when the item is new
    new: str | None  # outcome, None when the item is gone
    message: str


@dataclass
class Comparison:
    regressions: list[Change] = field(default_factory=list)
    fixes: list[Change] = field(default_factory=list)
    newly_supported: list[Change] = field(default_factory=list)
    changed_failures: list[Change] = field(default_factory=list)
    changed_divergences: list[Change] = field(default_factory=list)
    other_changes: list[Change] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    compared: int = 0


def compare_runs(old: RunDocument, new: RunDocument) -> Comparison:
    before = {(r["backend"], r["id"]): r for r in old["items"]}
    after = {(r["backend"], r["id"]): r for r in new["items"]}
    result = Comparison(added=len(after.keys() - before.keys()), removed=len(before.keys() - after.keys()))
    for key in sorted(before.keys() & after.keys()):
        was, now = before[key], after[key]
        result.compared += 1
        change = Change(key[0], key[1], f"{now['op']}-{now['version']}", was["outcome"], now["outcome"], now["message"])
        if was["outcome"] == now["outcome"]:
            if now["outcome"] == Outcome.DIVERGENT.value and observed_reading(was) != observed_reading(now):
                change.message = f"{observed_reading(was)} -> {observed_reading(now)}"
                result.changed_divergences.append(change)
            continue
        if was["outcome"] == Outcome.UNSUPPORTED.value:
            result.newly_supported.append(change)
        elif now["outcome"] in FAILING_WORDS and was["outcome"] not in FAILING_WORDS:
            result.regressions.append(change)
        elif was["outcome"] == Outcome.PASS.value and now["outcome"] == Outcome.UNSUPPORTED.value:
            result.regressions.append(change)
        elif was["outcome"] in FAILING_WORDS and now["outcome"] not in FAILING_WORDS:
            result.fixes.append(change)
        elif was["outcome"] in FAILING_WORDS and now["outcome"] in FAILING_WORDS:
            result.changed_failures.append(change)
        elif Outcome.DIVERGENT.value in (was["outcome"], now["outcome"]):
            result.changed_divergences.append(change)
        else:
            result.other_changes.append(change)
    return result


def _causes_of(new: RunDocument, changes: list[Change]) -> dict[tuple[str, str], str]:
    """(backend, id) -> the cause line its new failure joins (report/causes.py), for the changes
    whose new outcome is a failure: a regression is named by its root cause, not its operator."""
    wanted = {(c.backend, c.id) for c in changes}
    records = [r for r in new["items"] if (r["backend"], r["id"]) in wanted]
    return {(backend, r["id"]): line.signature for backend, lines in failure_clusters(records, new["catalogue"]).items()
            for line in lines for r in line.records}


def render_comparison(old: RunDocument, new: RunDocument, comparison: Comparison) -> str:
    def versions(document):
        return ", ".join(f"{b['name']} {b['version']}" for b in document["environment"]["backends"])

    lines = [f"# Conformance: {versions(old)} ({old['started']}) -> {versions(new)} ({new['started']})", "",
             f"{comparison.compared} items in both runs; {comparison.added} new, {comparison.removed} gone.", ""]
    cause = _causes_of(new, comparison.regressions + comparison.changed_failures)
    for title, changes in [("Regressions", comparison.regressions), ("Fixes", comparison.fixes),
                           ("Newly supported (unsupported before: never judged)", comparison.newly_supported),
                           ("Failures that changed kind", comparison.changed_failures),
                           ("Open questions read differently", comparison.changed_divergences),
                           ("Other changes", comparison.other_changes)]:
        lines.append(f"## {title} ({len(changes)})")
        grouped: dict[tuple[str, str], list[Change]] = defaultdict(list)
        for change in changes:  # by cause where the item now fails, else by operator version
            grouped[change.backend, cause.get((change.backend, change.id), change.op_version)].append(change)
        for (backend, line), members in sorted(grouped.items()):
            lines.append(f"- {backend} {line}: {len(members)}")
            lines += [f"  - {c.id}: {c.old} -> {c.new}: {shorten(c.message, 200)}" for c in members]
        lines.append("")
    return "\n".join(lines)

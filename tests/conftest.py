"""Shared settings for the project's own tests."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter):
    """Print the mutation self-test's kill count (test_mutants.py records one property per mutant)."""
    results = [value for reports in terminalreporter.stats.values() for report in reports
               if getattr(report, "when", None) == "call"
               for name, value in report.user_properties if name == "mutant"]
    if not results:
        return
    killed = [r for r in results if r["killed_by"]]
    terminalreporter.section("mutation self-test")
    terminalreporter.write_line(f"{len(killed)} of {len(results)} mutants of the reference backend killed")
    for result in sorted(results, key=lambda r: r["name"]):
        terminalreporter.write_line(f"  {result['name']:<38} {result['killed_by'] or 'SURVIVED'}"[:160])

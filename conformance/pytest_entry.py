"""pytest's entry point for the suite (pyproject.toml's pytest11): it hands the distribution's
modules back to Python's own importer, then loads the plugin's hooks.

pytest marks every package of a plugin's distribution for assertion rewriting. The few asserts in
the suite are invariants with nothing for pytest to explain, and where bytecode is not written
(PYTHONDONTWRITEBYTECODE, a read-only install) every pytest process, each xdist worker included,
would rewrite these modules again: 0.2 to 0.5 s of CPU each. This module is the first of them that
pytest imports (after the package's ``__init__``, which runs nothing), so it is the one place that
can unmark the rest before they load; and only pytest imports it. A pytest whose hook lacks these
attributes is left as it is."""

import sys

REWRITTEN_BY_DEFAULT = ("conformance", "reference_backend")  # the distribution's top-level packages


def leave_unrewritten() -> None:
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        decided = getattr(finder, "_marked_for_rewrite_cache", None)
        if type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set) and isinstance(decided, dict):
            marked.difference_update({name for name in marked if name.partition(".")[0] in REWRITTEN_BY_DEFAULT})
            decided.clear()


leave_unrewritten()

from conformance.plugin import pytest_addoption, pytest_configure  # noqa: E402  (unmarked first, above)

__all__ = ["pytest_addoption", "pytest_configure"]

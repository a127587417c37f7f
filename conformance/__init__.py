"""Conformance suite for the ONNX max-pooling operator family.

One package per stage of the pipeline: load (case files) -> expand (items) -> backends (run) ->
judge (with semantics) -> report. plugin/ drives it from pytest; cli.py is the `conformance` command.
"""

import sys

__version__ = "0.1.0"


def _left_unrewritten_by_pytest() -> None:
    """pytest marks the packages of a plugin's distribution for assertion rewriting. The few
    asserts here are invariants with nothing for pytest to explain, and where bytecode is not
    written (PYTHONDONTWRITEBYTECODE, a read-only install) every pytest process, each xdist worker
    included, would rewrite these modules again: 0.2 to 0.5 s of CPU each. Unmarked here, before
    the plugin imports the rest; a pytest without these attributes is left as it is."""
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        decided = getattr(finder, "_marked_for_rewrite_cache", None)
        if type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set) and isinstance(decided, dict):
            marked.difference_update({name for name in marked if name.partition(".")[0] in (__name__, "reference_backend")})
            decided.clear()


_left_unrewritten_by_pytest()

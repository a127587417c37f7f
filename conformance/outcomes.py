"""The outcome vocabulary, the one place it is written: what an item can end as, which of those
fail a run, which an expectations file may list, and the order reports show them in.

It sits at the ground of the import graph (beside ``semantics``), so that the judge, the
reports, the fuzz and the plugin all read the same words. ``Outcome`` is a ``str`` enum: a
member equals its value (``Outcome.PASS == "pass"``), so records read back from results.json
compare with it; but it does not hash like its value, so the words of records are kept apart
(``FAILING_WORDS``, ``REPORT_WORDS``).
"""

from __future__ import annotations

from enum import Enum


class Outcome(str, Enum):
    PASS = "pass"  # the expected outputs, or an invalid model refused
    FAIL = "fail"  # wrong outputs, or an invalid model accepted
    ERROR = "error"  # a refusal of a valid model, or an answer that is not a list of arrays
    CRASH = "crash"  # the backend's process died (isolated runs)
    TIMEOUT = "timeout"  # no answer within the per-item timeout (isolated runs)
    UNSUPPORTED = "unsupported"  # the backend says it cannot run this operator or type
    DIVERGENT = "divergent"  # behaviour the documents leave open: recorded, never judged
    XFAIL = "xfail"  # a known failure, listed in the backend's expectations file
    XPASS = "xpass"  # listed as a known failure but passes: the list is out of date
    SKIPPED = "skipped"  # listed in the backend's skips file (it hangs on the item): never run


# What the backend got wrong: what the fuzz hunts and an expectations file may list as known.
BACKEND_FAILURES = (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT)
# What fails a run: the backend's failures, and a listed failure that passes (a stale list).
FAILING = BACKEND_FAILURES + (Outcome.XPASS,)
FAILING_WORDS = tuple(o.value for o in FAILING)
# What an expectations file matched (its entry is shown beside the item).
LISTED = (Outcome.XFAIL, Outcome.XPASS)
# The order of the report's columns and badges: the green ones first, then the failures.
REPORT_ORDER = (Outcome.PASS, Outcome.XFAIL, Outcome.DIVERGENT, Outcome.UNSUPPORTED, Outcome.SKIPPED) + FAILING
REPORT_WORDS = tuple(o.value for o in REPORT_ORDER)

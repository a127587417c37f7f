"""The frozen derived expectations: ``cases/derived.lock`` holds, for the bundled cases and the
default seed, one line per item whose expectations the reference backend derives:

    <item id>  <output>=<dtype>[<shape>]:<sha256 of dtype, shape and bytes, 16 hex digits> ...

sorted by id, so that a change to the reference that moves an expected value shows as a diff
in review, and a merge regenerates it cleanly. ``conformance lock --check`` compares the
reference's answers with it; ``conformance lock --update`` rewrites it, after checking the
reference against the naive loops of ``reference_backend/naive.py`` (the specification) on every item whose line changes. A run
with the default seed checks each derived expectation against its line (a mismatch is a suite
error, never the backend's).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reference_backend.naive import (naive_activation, naive_max_pool, naive_max_unpool,
                                     naive_openvino_max_pool)

from ..expand.items import Item, load_items, stored
from ..atomic import write_atomically
from ..load.cases import bundled_case_dir
from .compare import same_bits
from ..load.limits import ReadRefused, read_state_text
from .verdict import SuiteError

LOCK_FILE = "derived.lock"
MAX_LOCK_BYTES = 64 << 20  # the bundled lock is about 1.5 MB
SHOWN_ITEMS = 20
SHOWN_ELEMENTS = 4


def lock_path(case_dir: Path | None = None) -> Path:
    return (case_dir or bundled_case_dir()) / LOCK_FILE


def digest(array: np.ndarray) -> str:
    array = np.ascontiguousarray(array)
    content = f"{array.dtype.str}{list(array.shape)}".encode() + array.tobytes()
    return f"{array.dtype}{list(array.shape)}:{hashlib.sha256(content).hexdigest()[:16]}".replace(" ", "")


def entry(item: Item, expected: dict[str, np.ndarray]) -> str:
    """An item's line without its id: each output's type, shape and digest."""
    return " ".join(f"{o.name}={digest(expected[o.name])}" for o in item.outputs)


def read_lock(path: Path) -> dict[str, str]:
    """The locked lines; ReadRefused (one line) for anything but a lock: a missing file, a FIFO,
    a directory, a device, text that is not UTF-8, or a line that is not ``id<TAB>outputs``."""
    lines = {}
    for number, line in enumerate(read_state_text(path, MAX_LOCK_BYTES).splitlines(), 1):
        if line and not line.startswith("#"):
            item_id, tab, rest = line.partition("\t")
            if not tab or not rest or not item_id.isprintable():
                raise ReadRefused(number, "", f"{path}:{number}: not a locked line (item id, a tab, its outputs)")
            lines[item_id] = rest
    return lines


def write_lock(path: Path, lines: dict[str, str]) -> None:
    header = ("# Derived expectations of the bundled cases at seed 0, frozen: `conformance lock --update`\n"
              "# rewrites this file (see conformance/judge/lock.py); do not edit.\n")
    text = header + "".join(f"{key}\t{lines[key]}\n" for key in sorted(lines))
    write_atomically(path, text)  # a reader sees the old lock or the new one, never half


@dataclass
class LockError(SuiteError):
    """A derived expectation differs from its locked line: the suite's own fault."""

    item_id: str
    locked: str
    now: str

    def __str__(self) -> str:
        return (f"the derived expectation of {self.item_id} differs from {LOCK_FILE} (a change of the reference "
                f"backend, not the backend's fault): now {self.now}, locked {self.locked}; "
                f"run `conformance lock --check` for the first differing elements")


class Lock:
    """The locked lines, consulted by a run with the default seed and the bundled cases. A lock
    that cannot be read, or has no line for a derived item, fails that item as the suite's
    error: an expectation that was never frozen is never judged in silence."""

    def __init__(self, path: Path):
        self.path, self.problem = path, None
        try:
            self.lines = read_lock(path)
        except ReadRefused as e:
            self.lines, self.problem = {}, e.message

    def verify(self, item: Item, expected: dict[str, np.ndarray]) -> None:
        if self.problem is not None:
            raise SuiteError(f"{item.id}: its derived expectation cannot be checked: {self.problem}")
        locked = self.lines.get(item.id)
        now = entry(item, expected)
        if locked is None:
            raise SuiteError(f"{item.id} has no line in {self.path} (a truncated lock, or a case added without "
                             "`conformance lock --update`): its derived expectation was never frozen")
        if locked != now:
            raise LockError(item.id, locked, now)


def derived_items(case_dir: Path) -> list[Item]:
    return [item for item in load_items(case_dir) if item.expectation == "derived"]


def current_lines(items: list[Item], seed: int = 0) -> tuple[dict[str, str], dict[str, dict[str, np.ndarray]]]:
    """Each item's line and expected outputs, derived now by the reference backend."""
    from .verdict import expected_outputs

    lines, outputs = {}, {}
    for item in items:
        expected = expected_outputs(item, item.to_model(item.case_inputs(seed)))
        lines[item.id], outputs[item.id] = entry(item, expected), expected
    return lines, outputs


def naive_outputs(item: Item, written: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs of a suite item by the naive loops (reference_backend/naive.py, the specification),
    from its inputs as the case writes them (channels-first); Y in the operator's own layout, as
    the model gives it."""
    attrs = dict(item.case.attributes)
    count = len(item.outputs)
    if item.case.domain == "org.openvinotoolkit":
        return list(naive_openvino_max_pool(written["X"], **attrs))[:count]
    if item.case.op in ("MaxPool", "NhwcMaxPool"):
        activation, bounds = attrs.pop("activation", None), attrs.pop("activation_params", None)
        y, indices = naive_max_pool(written["X"], **attrs)
        if activation:
            y = naive_activation(y, *bounds)
        return [stored(y, item.layout), indices][:count]
    written_shape = written.get("output_shape")
    output_shape = None if written_shape is None else [int(d) for d in written_shape]
    if item.case.upstream:
        pooled, indices = naive_max_pool(written[item.inputs[0].name], **item.case.upstream.attributes)
    else:
        pooled, indices = written["X"], written["I"]
    return [naive_max_unpool(pooled, indices, output_shape=output_shape, **attrs)]


def _first_differences(item: Item, reference: dict[str, np.ndarray], naive: list[np.ndarray]) -> list[str]:

    found = []
    for output, theirs in zip(item.outputs, naive):
        ours = reference[output.name]
        if ours.dtype != theirs.dtype or ours.shape != theirs.shape:
            found.append(f"    {output.name}: reference {ours.dtype}{list(ours.shape)}, "
                         f"naive loops {theirs.dtype}{list(theirs.shape)}")
            continue
        for at in np.argwhere(~same_bits(ours, theirs))[:SHOWN_ELEMENTS]:
            at = tuple(int(i) for i in at)
            found.append(f"    {output.name}[{', '.join(map(str, at))}]: reference {ours[at]!r}, naive loops {theirs[at]!r}")
    return found


def naive_disagreement(item: Item, reference: dict[str, np.ndarray], seed: int = 0) -> list[str]:
    """Where the reference and the naive loops differ on ``item`` (empty: they agree)."""
    try:
        theirs = naive_outputs(item, item.case_inputs(seed))
    except Exception as e:  # noqa: BLE001 - the naive loops refusing is a disagreement too
        return [f"    the naive loops refuse it: {type(e).__name__}: {e}"]
    return _first_differences(item, reference, theirs)


def diff(items: list[Item], locked: dict[str, str], now: dict[str, str],
         outputs: dict[str, dict[str, np.ndarray]]) -> list[str]:
    """A readable diff, one paragraph per changed item (the first SHOWN_ITEMS)."""
    by_id = {item.id: item for item in items}
    changed = sorted(k for k in set(locked) | set(now) if locked.get(k) != now.get(k))
    text = []
    for key in changed[:SHOWN_ITEMS]:
        text.append(f"{key}:\n    now:    {now.get(key, '(no derived expectation)')}\n"
                    f"    locked: {locked.get(key, '(not in the lock)')}")
        if key in by_id:
            disagreement = naive_disagreement(by_id[key], outputs[key])
            text.append("    the naive loops agree with the reference now" if not disagreement else
                        "    the reference now differs from the naive loops:\n" + "\n".join(disagreement))
    if len(changed) > SHOWN_ITEMS:
        text.append(f"... and {len(changed) - SHOWN_ITEMS} more")
    return text


def check(case_dir: Path | None = None) -> int:
    path = lock_path(case_dir)
    try:
        locked = read_lock(path)
    except ReadRefused as e:
        print(f"conformance lock: {e.message}", file=sys.stderr)
        return 2
    items = derived_items(case_dir or bundled_case_dir())
    now, outputs = current_lines(items)
    changes = diff(items, locked, now, outputs)
    if not changes:
        print(f"{path}: {len(now)} derived expectations, all as locked")
        return 0
    count = sum(1 for k in set(locked) | set(now) if locked.get(k) != now.get(k))
    print(f"{path}: {count} derived expectations differ from the lock")
    print("\n".join(changes))
    print("if the change is intended: conformance lock --update")
    return 1


def update(case_dir: Path | None = None) -> int:
    path = lock_path(case_dir)
    try:
        locked = read_lock(path) if path.exists() or path.is_symlink() else {}  # the first lock of a directory
    except ReadRefused as e:
        print(f"conformance lock: {e.message} (remove it to write a new one)", file=sys.stderr)
        return 2
    items = derived_items(case_dir or bundled_case_dir())
    now, outputs = current_lines(items)
    changed = [item for item in items if locked.get(item.id) != now[item.id]]
    disagreeing = {item.id: naive_disagreement(item, outputs[item.id]) for item in changed}
    disagreeing = {k: v for k, v in disagreeing.items() if v}
    if disagreeing:
        print(f"{path} not written: on {len(disagreeing)} of the {len(changed)} changed items the reference "
              "differs from the naive loops", file=sys.stderr)
        for key, lines in list(disagreeing.items())[:SHOWN_ITEMS]:
            print(f"{key}:\n" + "\n".join(lines), file=sys.stderr)
        return 1
    write_lock(path, now)
    removed = len(set(locked) - set(now))
    print(f"wrote {path}: {len(now)} derived expectations ({len(changed)} changed or new, {removed} removed; "
          "the changed ones checked against the naive loops)")
    return 0

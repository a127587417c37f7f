"""A record of an installed tree (ort-js's npm packages, a sweep cell's environment), kept outside
it: every file and link with its identity (mode, size, times, inode) and content (SHA-256, or a
link's target). A tree is believed only while it matches its record: a file added, removed,
replaced or rewritten differs, and a file whose identity changed is hashed again, so that a
tree nobody touched is checked at the cost of a stat per file."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from ..atomic import write_atomically
from .limits import ReadRefused, read_regular

MAX_RECORD_BYTES = 64 << 20  # a sweep environment with a runtime holds some 20,000 files: a few MB


def identity(info: os.stat_result) -> list[int]:
    return [info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def content(path: Path, info: os.stat_result) -> str:
    """A file's SHA-256, or a link's target: what a process would read there."""
    if stat.S_ISLNK(info.st_mode):
        return "link:" + os.readlink(path)
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def files_under(root: Path) -> dict[str, os.stat_result]:
    """Every file and link under ``root`` (links not followed), by relative path; anything else
    that is not a directory (a FIFO, a device, a socket) too, so that it differs from any record."""
    found = {}
    for directory, subdirectories, files in os.walk(root, followlinks=False):
        for name in (*files, *(d for d in subdirectories if os.path.islink(os.path.join(directory, d)))):
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = os.lstat(path)
    return found


def record(root: Path, path: Path) -> None:
    """The tree at ``root`` as it is now, written whole to ``path`` (its directory made, mode 0700)."""
    files = {name: [*identity(info), content(root / name, info)] for name, info in sorted(files_under(root).items())}
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomically(path, json.dumps({"root": str(root), "files": files}), private=True)


def difference(root: Path, path: Path) -> str | None:
    """Where the tree at ``root`` differs from its record at ``path`` (None: nowhere), in words."""
    try:
        kept = json.loads(read_regular(path, MAX_RECORD_BYTES, follow_links=False))
        recorded = kept["files"]
        if not isinstance(recorded, dict) or kept["root"] != str(root):
            raise ValueError
    except (ReadRefused, OSError, ValueError, KeyError, TypeError, RecursionError):
        return f"no record of {root}'s installed files in {path}"
    try:
        found = files_under(root)
    except OSError as e:
        return f"{root} cannot be read ({e.strerror})"
    for name in sorted(set(found) | set(recorded)):
        was, info = recorded.get(name), found.get(name)
        if was is None or info is None:
            return f"{name} was {'added to' if was is None else 'removed from'} {root} since it was recorded"
        if not (isinstance(was, list) and len(was) == 6):
            return f"the record of {name} in {path} is not one"
        if identity(info) != was[:5] and (not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode))
                                          or content(root / name, info) != was[5]):
            return f"{name} in {root} changed since it was recorded"
    return None

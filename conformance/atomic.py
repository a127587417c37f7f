"""A file written whole or not at all, for every file the suite writes: the report, the lock, the
caches' entries, a sweep's cells, the recorded trees. The data goes to a new temporary file of
its own in the target's directory (never one at a name known in advance, which another user could
plant as a link), which then replaces the target: a reader sees the old file or the new one, a
link at the target is replaced and never written through, and a failure midway (a full disk,
Ctrl-C) leaves no temporary file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(target: Path, data: str | bytes, private: bool = False) -> Path:
    """``data`` as ``target``, its directory made. A private file (a cache entry, a record of
    installed files) is the user's alone (mode 0600); any other one has the mode the umask gives
    a new file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")  # mode 0600
    try:
        with open(fd, "wb") as file:
            file.write(data.encode() if isinstance(data, str) else data)
        if not private:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target

"""The user's own directories, as the XDG base directory specification names them: a variable's
value where it is an absolute path (the specification ignores a relative one, which would put the
directory under whatever the working directory is), else the default under the user's home (from
the password database where ``HOME`` is empty or relative); None where the user has no home."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

APP = "maxpool-conformance"


def base_directory(variable: str, default: str) -> Path | None:
    """``$variable``, or ``~/default``: ``("XDG_CACHE_HOME", ".cache")``, ``("XDG_CONFIG_HOME", ".config")``."""
    value = os.environ.get(variable, "")
    if os.path.isabs(value):
        return Path(value)
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):
        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:
            return None
    return Path(home) / default if os.path.isabs(home) and home != "/" else None


def own_directory(path: Path) -> Path | None:
    """``path``, made where missing (mode 0700), where it is the user's own: a real directory (no
    link), owned by the user and writable by no one else; None otherwise (never followed or used)."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return path

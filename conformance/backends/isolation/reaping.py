"""Every process a backend starts dies with its child: the child is a subreaper (an orphaned
descendant, say a daemon that double-forks, is reparented to it rather than to init), and killing
it kills, in one pass, its process group, every process of its session (a grandchild that moved to
a group of its own with ``setpgid(0, 0)`` stays in the session), every descendant by parent links
(one that called ``setsid()`` stays a descendant) and every process whose environment holds the
child's token (a daemon orphaned when the child itself died, in a session of its own, still
inherited it), again until none is left."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
PASSES = 5  # a process that forks while it is being killed is met on the next pass
TOKEN_VARIABLE = "CONFORMANCE_ISOLATION_TOKEN"


def become_subreaper() -> None:
    """Orphaned descendants of this process are reparented to it (Linux; elsewhere nothing)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _processes() -> dict[int, tuple[int, int, int]]:
    """Every live process: pid -> (parent, group, session); zombies left out (they are dead)."""
    found: dict[int, tuple[int, int, int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                fields = file.read().rpartition(b")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if len(fields) > 3 and fields[0] != b"Z":
            found[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    return found


def _holds(pid: int, token: bytes) -> bool:
    """Whether ``pid``'s environment holds ``token`` (another user's cannot be read: False)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return token in file.read(1 << 20).split(b"\0")
    except OSError:
        return False


def _family(root: int, processes: dict[int, tuple[int, int, int]], token: str | None) -> set[int]:
    family = {pid for pid, (_, group, session) in processes.items() if root in (group, session)}
    family.add(root)
    if token:
        marked = f"{TOKEN_VARIABLE}={token}".encode()
        family.update(pid for pid in processes if _holds(pid, marked))
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    frontier = list(family)
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in family:
                family.add(child)
                frontier.append(child)
    return family


def kill_family(root: int, token: str | None = None) -> None:
    """SIGKILL ``root`` (a session leader) and every process of its group, its session and its
    descendants, and every one that holds ``token``, except the caller; on a system without /proc,
    its process group alone."""
    me = os.getpid()
    if not os.path.isdir("/proc"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root, signal.SIGKILL)
        return
    for _ in range(PASSES):  # no killpg first: the watchdog, which calls this, is in the group
        family = _family(root, _processes(), token) - {me}
        alive = [pid for pid in family if pid != root or _alive(root)]
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return False

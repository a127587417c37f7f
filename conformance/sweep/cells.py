"""Running a cell: an environment of its own (uv where it is installed, else venv and pip) with
the suite and one release of a runtime, one run of the suite in it, and what came of it in
``cell.json`` beside the run's report. A finished cell whose key (the release, its pins, the
suite's revision) is unchanged is reused, not run again.

Neither a cell nor an environment is believed for being there. ``cell.json`` holds a seal: an
HMAC under the user's own key (the expansion cache's, kept outside every cache) over the cell's
key and the digests of its results.json and run.log, so that a cell made or edited by hand is run
again, never read as a release's verdicts. An environment is reused only while it matches the
record of its files made when it was installed, kept beside that key (load/tree_records.py): a
planted interpreter, or any file changed since, has the environment made again."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..expand.cache import hmac_of, key_directory, user_key
from ..load import tree_records
from ..load.limits import ReadRefused, read_regular, read_state_text
from ..report.results import MAX_RESULTS_BYTES, ResultsError, read_results
from ..atomic import write_atomically
from .plan import Cell

CELL_FILE = "cell.json"
RESULTS = "results.json"
LOG = "run.log"
MAX_CELL_BYTES = 64 * 1024
MAX_LOG_BYTES = 64 << 20  # of a cell's run.log read back for its last line: a run writes a few MB at most
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 3600


@dataclass
class Outcome:
    """What a cell came to: ``ran`` (its results.json beside it), ``cannot install`` or ``failed to run``."""

    cell: Cell
    status: str
    message: str
    seconds: float
    reused: bool = False
    summary: dict[str, int] | None = None

    def as_json(self, key: str, seal: str = "") -> dict[str, Any]:
        return {"label": self.cell.label, "backend": self.cell.backend, "package": self.cell.package,
                "version": self.cell.version, "pins": list(self.cell.pins), "key": key, "status": self.status,
                "message": self.message, "seconds": round(self.seconds, 1), "summary": self.summary, "seal": seal}

    def line(self) -> str:
        how = "reused" if self.reused else f"{self.seconds:.0f} s"
        counts = ", ".join(f"{n} {o}" for o, n in sorted((self.summary or {}).items()))
        return f"{self.cell.label:28} {self.status:14} {how:>8}  {counts or self.message}"


def read_cells(paths: list[Path]) -> tuple[list[Path], list[dict[str, Any]]]:
    """The results.json of each path (a file, or a cell directory that ran) and the cell.json of
    each cell directory that did not run."""
    results, not_run = [], []
    for path in paths:
        if not path.is_dir():
            results.append(path)
            continue
        try:
            cell = json.loads(read_state_text(path / CELL_FILE, MAX_CELL_BYTES))
        except ReadRefused as e:
            raise ResultsError(f"{path}: not a sweep cell ({e.message})") from None
        except (OSError, ValueError, RecursionError) as e:
            raise ResultsError(f"{path}: not a sweep cell ({CELL_FILE}: {str(e)[:200]})") from None
        if not (isinstance(cell, dict) and all(isinstance(cell.get(k), str) for k in ("label", "status", "message"))):
            raise ResultsError(f"{path / CELL_FILE}: a cell has a label, a status and a message")
        if cell["status"] == "ran":
            results.append(path / RESULTS)
        else:
            not_run.append(cell)
    return results, not_run


def finished(cell: Cell, directory: Path, key: str) -> Outcome | None:
    """The cell's earlier outcome where it ran with the same key and its results still read."""
    try:
        kept = json.loads(read_state_text(directory / CELL_FILE, MAX_CELL_BYTES))
        if not isinstance(kept, dict) or kept.get("key") != key or kept.get("status") != "ran":
            return None
        if not isinstance(kept.get("seal"), str) or not hmac.compare_digest(kept["seal"], seal_of(directory, key)):
            return None  # not sealed by this user over these files: made or changed by someone else
        summary = read_results(directory / RESULTS)["summary"]
    except (OSError, ValueError, RecursionError, ResultsError, ReadRefused):
        return None  # an unreadable or foreign cell.json (a FIFO, a link, garbage) is a cell to run
    return Outcome(cell, "ran", "", float(kept.get("seconds") or 0), reused=True, summary=summary)


def run_cell(cell: Cell, directory: Path, key: str, environments: Path, root: Path) -> Outcome:
    """Install and run ``cell`` (``root``: the suite's source, installed editable), writing its report
    into ``directory``; the outcome is written to its cell.json too."""
    started = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    # the suite is installed editable from ``root``: an environment belongs to one clone
    clone = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]
    env = environments / f"py{sys.version_info[0]}{sys.version_info[1]}-{cell.package}-{cell.version}-{_pins_name(cell)}-{clone}"
    problem = prepare(env, root, [f"{cell.package}=={cell.version}", *cell.pins])
    if problem is not None:
        outcome = Outcome(cell, "cannot install", problem, time.monotonic() - started)
    else:
        outcome = _run(cell, env, directory, root, started)
    try:
        seal = seal_of(directory, key)
    except (OSError, ReadRefused):  # no key can be kept (no home), or a file unreadable: a cell never reused
        seal = ""
    write_atomically(directory / CELL_FILE, json.dumps(outcome.as_json(key, seal), indent=1))  # a link there is replaced
    return outcome


def seal_of(directory: Path, key: str) -> str:
    """The user's HMAC over the cell's key and the SHA-256 of its results.json and run.log (each
    "absent" where missing). OSError where the user's key cannot be kept; ReadRefused for a file
    that is no regular one within its bound."""
    digests = []
    for name, bound in ((RESULTS, MAX_RESULTS_BYTES), (LOG, MAX_LOG_BYTES)):
        path = directory / name
        digests.append(hashlib.sha256(read_regular(path, bound, follow_links=False)).hexdigest()
                       if os.path.lexists(path) else "absent")
    return hmac_of(user_key(), "sweep-cell", "\0".join([key, *digests]).encode())


def _new_file(path: Path):
    """``path`` opened new for writing: a file or link left in its place is removed first, never
    written through."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666), "w")


def _pins_name(cell: Cell) -> str:
    """The pins in a directory's name: "numpy<2" as "numpy-lt-2"."""
    words = {"<": "-lt-", ">": "-gt-", "=": "-eq-", "!": "-not-", "~": "-compatible-"}
    return "_".join("".join(c if c.isalnum() or c == "." else words.get(c, "_") for c in pin) for pin in cell.pins) or "plain"


def prepare(env: Path, root: Path, requirements: list[str]) -> str | None:
    """An environment at ``env`` with the suite (editable, from ``root``) and ``requirements``;
    None once it is ready, else the installer's own line on why not."""
    try:
        record = environment_record(env)
    except OSError as e:  # no home for the user's key: an environment could never be believed again
        return f"no record of the environment can be kept ({e})"
    if tree_records.difference(env, record) is None:
        return None
    _remove(env)  # planted, changed or half made: made again, whole
    beside = Path(sys.executable).with_name("uv")  # the [sweep] extra's, where the venv is not on PATH
    uv = shutil.which("uv") or (str(beside) if beside.exists() else None)
    python = env / "bin" / "python"
    if uv:
        steps = [[uv, "venv", "-q", "--allow-existing", "--python", sys.executable, str(env)],
                 [uv, "pip", "install", "-q", "--python", str(python), "-e", str(root), *requirements]]
    else:
        steps = [[sys.executable, "-m", "venv", str(env)],
                 [str(python), "-m", "pip", "install", "-q", "-e", str(root), *requirements]]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            return f"{Path(step[0]).name} took over {INSTALL_TIMEOUT_S} s"
        if done.returncode != 0:
            return _installer_line(done.stderr or done.stdout)
    try:
        tree_records.record(env, record)
    except OSError as e:
        return f"the environment's record cannot be written ({e})"
    return None


def environment_record(env: Path) -> Path:
    """Where the record of ``env``'s files is kept: beside the user's key, outside every cache."""
    name = hashlib.sha256(os.path.abspath(env).encode()).hexdigest()[:32]
    return key_directory() / "sweep-environments" / f"{name}.json"


def _remove(path: Path) -> None:
    """``path`` gone, whatever it is; a link is removed, never followed."""
    if os.path.islink(path) or (os.path.lexists(path) and not path.is_dir()):
        os.unlink(path)
    elif path.exists():
        shutil.rmtree(path)


def _installer_line(text: str) -> str:
    """The line of an installer's output that says why: uv's cause, pip's error, else the last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for prefix in ("╰─▶", "cause:", "Because", "ERROR:", "error:", "×"):
        found = next((line for line in lines if line.startswith(prefix)), None)
        if found:
            return found.removeprefix("╰─▶").removeprefix("cause:").strip()[:300]
    return (lines[-1] if lines else "the installer failed without a word")[:300]


def _run(cell: Cell, env: Path, directory: Path, root: Path, started: float) -> Outcome:
    # pytest's cache stays on: the items' oracles it keeps (the reference's answers at the seed, under
    # a key of the suite, numpy and onnx) are the same in every cell of one suite revision
    command = [str(env / "bin" / "python"), "-m", "pytest", "conformance", f"--backend={cell.backend}",
               f"--report={directory}", f"--conformance-label={cell.label}", "-q", *cell.pytest_args]
    log = directory / LOG
    with _new_file(log) as out:
        try:
            done = subprocess.run(command, cwd=root, stdout=out, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S,
                                  env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, check=False)
        except subprocess.TimeoutExpired:
            return Outcome(cell, "failed to run", f"the run took over {RUN_TIMEOUT_S} s (see {log})", time.monotonic() - started)
    try:
        document = read_results(directory / RESULTS)
    except (OSError, ResultsError) as e:
        try:
            tail = read_regular(log, MAX_LOG_BYTES, follow_links=False).decode(errors="replace").strip().splitlines()[-1:] or [""]
        except ReadRefused as refused:
            tail = [refused.message]
        return Outcome(cell, "failed to run", f"pytest exited {done.returncode} without results ({tail[0][:200]}; {e})",
                       time.monotonic() - started)
    if document.get("partial"):
        return Outcome(cell, "failed to run", f"the run stopped early (exit {done.returncode}; see {log})",
                       time.monotonic() - started, summary=document["summary"])
    return Outcome(cell, "ran", "", time.monotonic() - started, summary=document["summary"])

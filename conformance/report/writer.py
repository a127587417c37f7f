"""Stage 5 of the pipeline: the run's environment and one record per item, as results.json
(format: ``schema/results.schema.json``), with its HTML and Markdown renderings."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np
import onnx

from ..backends import Backend
from ..expand.items import Item
from ..atomic import write_atomically
from ..judge.oracle import ScriptValues
from .journal import JOURNAL_FILE, document_of
from .record import SCHEMA_VERSION, BackendRecord, Environment, ItemRecord, RunDocument

if TYPE_CHECKING:  # the results model is imported where a report is written, not by every run's start
    from .causes import Cluster

RESULTS_FILE = "results.json"
FUZZ_RUN = "conformance-fuzz-run"  # the user property that carries a fuzz run from a worker to the report
HTML_FILE = "report.html"
MARKDOWN_FILE = "summary.md"


def environment(backends: list[tuple[Backend, Backend]], seed: int, case_dir: Path,
                label: str | None = None, specs: Sequence[str] = ()) -> Environment:
    """``backends``: (the backend, what runs it) pairs; the runner adds its isolation settings;
    ``label``: the run's name (--conformance-label); ``specs``: each backend as --backend named it,
    which the repro scripts are written for (a record's own command line is never parsed back)."""
    from .. import __version__

    described: list[BackendRecord] = []
    for index, (backend, runner) in enumerate(backends):
        details = dict(backend.details())
        if runner is not backend:
            details.update(runner.details())
        record = BackendRecord(name=backend.name, version=backend.version, details=details)
        if getattr(backend, "title", None):
            record["title"] = str(backend.title)  # type: ignore[attr-defined]  # optional: the Protocol leaves it out
        if index < len(specs):
            record["spec"] = specs[index]
        described.append(record)
    return {
        "suite_version": __version__,
        "backends": described,
        "onnx": onnx.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "seed": seed,
        "cases": _shown(case_dir),
        **({"label": label} if label else {}),
    }


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when below it (reports travel between machines)."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def header_lines(env: Environment) -> list[str]:
    lines = []
    for backend in env["backends"]:
        details = ", ".join(f"{k} {v}" for k, v in backend["details"].items())
        lines.append(f"conformance backend: {backend['name']} {backend['version']} ({details})")
    lines.append(f"conformance onnx {env['onnx']}, numpy {env['numpy']}, seed {env['seed']} "
                 f"(replay with --seed={env['seed']}), cases {env['cases']}")
    return lines


class ReportError(Exception):
    """The report directory cannot be claimed or written (one line)."""


class ReportDirectory:
    """A directory one run writes its report into: created, checked by a first write, and locked
    against other runs for as long as the run lasts (the lock dies with the process)."""

    def __init__(self, path: Path, handle: int):
        self.path, self.handle = path, handle

    @classmethod
    def claim(cls, path: Path) -> "ReportDirectory":
        path = Path(os.path.abspath(path))  # a backend run in-process may change the working directory
        if path.exists() and not path.is_dir():
            raise ReportError("exists and is not a directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
            handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise ReportError(f"cannot create it: {e.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(handle)
            raise ReportError("another run is writing a report there; wait for it to end, or choose another "
                              "directory") from None
        return cls(path, handle)

    def release(self) -> None:
        os.close(self.handle)

    def __truediv__(self, name: str) -> Path:
        return self.path / name


class Results:
    """The run's records. With a directory, each record is appended to a journal as it arrives
    (JSON lines, written at once: a killed run keeps every finished item, and ``conformance report
    DIR/results.journal.jsonl`` makes its partial report), and results.json is written once, at the
    end: the cost per record is constant, never a rewrite of the run so far."""

    def __init__(self, env: Environment, directory: ReportDirectory | Path | None):
        self.env, self.directory = env, directory
        self.started = _now()
        self.records: list[ItemRecord] = []
        self.collection_errors: dict[str, str] = {}
        self.explanations: list[dict[str, Any]] = []  # the run's experiments, made at its end (explain/lines.py)
        self.journal: int | None = None
        if directory is not None:
            self.journal = _open_journal(Path(directory / JOURNAL_FILE))
            self._append({"journal": SCHEMA_VERSION, "environment": env, "started": self.started})

    def add(self, record: ItemRecord) -> None:
        self.records.append(record)
        self._append({"record": record})

    def add_collection_error(self, node: str, message: str) -> None:
        self.collection_errors[node] = message
        self._append({"collection_error": {"node": node, "message": message}})

    def _append(self, entry: dict[str, Any]) -> None:
        """One line of the journal, in one write (a line is whole or, cut by a kill, the last); a
        failure (a full disk) closes the journal and leaves the final write to report."""
        if self.journal is None:
            return
        try:
            os.write(self.journal, (json.dumps(entry, allow_nan=False, default=numpy_scalars) + "\n").encode())
        except OSError:
            self.close_journal()

    def close_journal(self, remove: bool = False) -> None:
        """Closed; with ``remove``, deleted too (results.json now holds all it held)."""
        if self.journal is not None:
            os.close(self.journal)
            self.journal = None
            if remove and self.directory is not None:
                with contextlib.suppress(OSError):
                    os.unlink(self.directory / JOURNAL_FILE)

    def checkpoint(self, interrupted: bool = False) -> None:
        """Write what there is as a partial results.json, where a run ends before its session
        does (or starts): a failure (a full disk) is left for the final write to report."""
        with contextlib.suppress(ReportError):
            self.write(partial=True, interrupted=interrupted)

    def document(self, partial: bool, interrupted: bool = False) -> RunDocument:
        return document_of(self.env, self.started, self.records, self.collection_errors, partial, interrupted,
                           self.explanations)

    def write(self, partial: bool, interrupted: bool = False) -> Path:
        assert self.directory is not None, "results without a report directory are never written"
        return _write_report(self.directory / RESULTS_FILE,
                             json.dumps(self.document(partial, interrupted), allow_nan=False, default=numpy_scalars))


def _open_journal(path: Path) -> int:
    """The journal, new and empty: a file or link left in its place is removed, never followed or
    appended to. ReportError where it cannot be made (a read-only directory, a full disk)."""
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None


def write_reports(results: Results, partial: bool, interrupted: bool,
                  items_of: Callable[[Path], Iterable[Item]] | None = None,
                  values_of: Callable[[Item], ScriptValues] | None = None) -> None:
    """results.json, and its HTML and Markdown renderings, into the results' directory; raises
    ReportError, leaving no temporary file behind. For the repro scripts, ``values_of``: an item's
    inputs and expected outputs from the run's oracle (none: no scripts), and ``items_of``: a case
    file's items where the run has them at hand (its expansion cache)."""
    from .html import render_html
    from .results import render_markdown
    from .known import report_model

    document = results.document(partial, interrupted)
    directory = results.directory
    assert directory is not None, "results without a report directory are never written"
    clusters, advice = report_model(document)  # once: the scripts, the HTML and the Markdown show the same lines
    if not partial and values_of is not None:
        write_scripts(document, directory, values_of, items_of, clusters)
    _write_report(directory / RESULTS_FILE, json.dumps(document, allow_nan=False, default=numpy_scalars))
    results.close_journal(remove=not partial)  # a whole run's results.json holds all the journal held
    _write_report(directory / HTML_FILE, render_html(document, clusters, advice))
    _write_report(directory / MARKDOWN_FILE, render_markdown(document, clusters, advice))


SCRIPTS_DIR = "repro"


def write_scripts(document: RunDocument, directory, values_of: Callable[[Item], ScriptValues],
                  items_of: Callable[[Path], Iterable[Item]] | None = None,
                  clusters: dict[str, list[Cluster]] | None = None) -> None:
    """The standalone script of each failure cause's smallest item, the one the HTML shows, as
    ``conformance repro`` writes it; its record names the file (``script_file``) for the link
    (``clusters``: the document's failure clusters, where the caller has them)."""
    from ..judge.control import twin_of
    from ..scripts.items import find_item
    from ..scripts.standalone import item_script
    from .html import SHOWN_CLUSTERS
    from .record import seen_line, twin_seen_line
    from .causes import failure_clusters

    if not document["environment"].get("cases"):  # a document of no case directory: nothing to rebuild
        return
    cases = Path(document["environment"]["cases"])
    seed = document["environment"]["seed"]
    specs = {b["name"]: b.get("spec") for b in document["environment"]["backends"]}
    _real_directory(Path(directory / SCRIPTS_DIR))
    for lines in (failure_clusters(document["items"], document["catalogue"]) if clusters is None else clusters).values():
        for cluster in lines[:SHOWN_CLUSTERS]:
            record = cluster.smallest
            spec = specs.get(record["backend"])
            if spec is None or not cases.is_dir():
                continue
            twin = record.get("twin")  # a line of a failed minimal valid model: that model's script
            try:
                found = find_item(record["id"].partition("@")[0], cases, record.get("file"), items_of)
                item = twin_of(found, seed) if twin else found
                assert item is not None, "a failed twin is found again"
                script = item_script(item, spec, seed, *values_of(item), twin_seen_line(record) if twin else seen_line(record),
                                     found.id if twin else None)
            except Exception:  # noqa: BLE001 - the item gone from the cases, say: a report without this link
                continue
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{record['backend']}_{item.id}").strip("_")[:150]
            (twin or record)["script_file"] = f"{SCRIPTS_DIR}/{name}.py"
            _write_report(directory / f"{SCRIPTS_DIR}/{name}.py", script)


def _real_directory(path: Path) -> None:
    """``path`` as a directory of its own: a link planted in its place (which would carry the
    scripts out of the report directory) is removed, never followed."""
    try:
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
        path.mkdir(exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot create {path}: {e.strerror or e}") from None


def _write_report(target: Path, text: str) -> Path:
    try:
        return write_atomically(target, text)
    except OSError as e:
        raise ReportError(f"cannot write {target}: {e.strerror or e}") from None


def numpy_scalars(value: Any) -> Any:
    """``json.dumps``'s ``default``: a numpy scalar is written as the Python number it holds."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

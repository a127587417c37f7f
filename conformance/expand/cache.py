"""Expanded case files, cached between runs: the bundled cases in the user's cache
(``$XDG_CACHE_HOME/maxpool-conformance/expansions``, shared by every directory and the installed
wheel), a ``--cases`` directory's in pytest's cache directory (``.pytest_cache``) of the run's.

Parsing and validating the YAML, then expanding it, is most of a run's start (about 5 s on two
cores), and a pasted repro line (``-k <id>``) needs it all to find its one item. The items of a
file (before any model is built: that happens when an item runs) are kept under a key made of
every byte they can depend on: the case directory's files (a case may derive from another file),
the bundled registry, the suite's own code, schemas and signatures, and the reading budgets
(``--conformance-limit``); any change makes a new key. The registry of open questions is kept
the same way. What does not load is never cached: its error shows every time.

The cache is read as untrusted input: in a format that cannot run code (``codec``), from regular
files only, bounded in bytes, checked against the types it must hold. And a cache may save time,
never decide a verdict: every entry is sealed with an HMAC under a key of the user's own, kept
outside the cache directory (``user_key``), over the entry's name and bytes. An entry that does not
verify (planted, edited, moved to another name, or copied in from another machine's cache, a
committed ``.pytest_cache`` or a restored CI cache) is computed again, exactly as if absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from ..atomic import write_atomically
from ..load.cases import Ambiguity, bundled_case_dir, load_case_file, load_registry
from ..load.limits import Limits, ReadRefused, read_regular
from ..load.user_dirs import APP, base_directory, own_directory
from . import codec
from .items import Item, expand

PACKAGE_DIR = Path(__file__).resolve().parent.parent
MAX_ENTRY_BYTES = 256 << 20  # the largest entry of the bundled cases is about 3 MB
# Items per stored part of a case file: a pasted repro line decodes the one part that holds its
# item (the 8,118 items of maxpool_edges.yaml took 0.5 s to decode as one entry; a part of 256,
# about 15 ms), a whole run every part, at the same cost as one entry.
PART_ITEMS = 256
# An entry of another key unchanged this long is removed when a case file is expanded again (a new
# clone or version of the suite): a fortnight keeps the caches of the clones in use, and bounds the
# rest.
STALE_DAYS = 14
ENTRY_NAME = re.compile(r"[0-9a-f]{24}-[\w.-]+\.json")  # a key, then the entry's name
# A file's fragments: one per process that ran its items in the last run (xdist workers, each
# merging what it read): more than this many were planted, and are read as none.
MAX_FRAGMENTS = 64
KEY_FILE = "cache-key"
T = TypeVar("T")


def key_directory() -> Path:
    """Where the user's cache key lives: their configuration directory, never the cache's. OSError
    where the user has none (no home): the run then goes uncached."""
    base = base_directory("XDG_CONFIG_HOME", ".config")
    if base is None:
        raise OSError("no configuration directory for the cache key (no HOME)")
    return base / APP


def shared_cache_directory() -> Path | None:
    """The user's cache of the bundled cases, shared by every directory a run starts from (and by
    the installed wheel): ``$XDG_CACHE_HOME/maxpool-conformance/expansions``; None where the user
    has none of their own (the run then keeps its cache in pytest's, per directory)."""
    base = base_directory("XDG_CACHE_HOME", ".cache")
    return None if base is None else own_directory(base / APP / "expansions")


def user_key() -> bytes:
    """The user's secret key for sealing cache entries, made on first use (32 random bytes, a file
    of mode 0600, created whole: xdist workers that race both read the one that won). A key file
    that is not one (garbage, a link, a FIFO), or that is not the user's alone (another user owns
    it, or others may read or write it: anyone could forge entries with it), is replaced by a new
    key, which costs the cache its entries, nothing else. OSError where no key can be kept: the run then goes uncached."""
    directory = key_directory()
    path = directory / KEY_FILE
    for _attempt in range(3):
        try:
            text = read_regular(path, 64, follow_links=False).decode("ascii")
            if len(text) == 64 and all(c in "0123456789abcdef" for c in text) and _private(path):
                return bytes.fromhex(text)
        except (ReadRefused, UnicodeDecodeError, OSError):
            pass
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{KEY_FILE}", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "w") as file:
                file.write(secrets.token_hex(32))
            if os.path.lexists(path):  # not a key: replaced whole
                os.replace(temporary, path)
            else:
                try:
                    os.link(temporary, path)  # never over a key another process made meanwhile
                except FileExistsError:
                    pass
        finally:
            Path(temporary).unlink(missing_ok=True)
    raise OSError(f"no cache key can be kept in {directory}")


def _private(path: Path) -> bool:
    """The file is the user's own and no one else's to read or write."""
    info = os.lstat(path)
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def seal(key: bytes, name: str, data: bytes) -> bytes:
    """``data`` stored under ``name``, preceded by its HMAC: moved to another name, it does not verify."""
    return hmac_of(key, name, data).encode() + b"\n" + data


def unseal(key: bytes, name: str, blob: bytes) -> bytes:
    """The data that ``seal`` stored under ``name``; ValueError for anything else."""
    kept, newline, data = blob.partition(b"\n")
    if not newline or not hmac.compare_digest(kept, hmac_of(key, name, data).encode()):
        raise ValueError("not sealed under this name with the user's key")
    return data


def hmac_of(key: bytes, name: str, data: bytes) -> str:
    """The HMAC-SHA256 of ``data`` under ``name`` with the user's ``key``, in hex."""
    return hmac.new(key, name.encode() + b"\0" + data, hashlib.sha256).hexdigest()


def suite_digest(case_dir: Path, limits: Limits) -> str:
    """A digest of what loading ``case_dir`` depends on. Only regular files within the budget
    are read: a FIFO or device named like a case file, or a huge one, enters by its name, type,
    size and time (the loader refuses it anyway, so nothing of it is cached)."""
    digest = hashlib.sha256(repr(limits).encode())
    inputs = [*case_dir.rglob("*"), *bundled_case_dir().glob("*.yaml"), *PACKAGE_DIR.rglob("*.py"),
              *PACKAGE_DIR.rglob("*.yaml"), *PACKAGE_DIR.glob("schema/*.json")]
    for path in sorted(set(inputs)):
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= limits.file_bytes:
            digest.update(f"{path}\0{info.st_size}\0".encode() + path.read_bytes())
        else:
            digest.update(f"{path}\0{info.st_mode}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:24]


def reference_digest() -> str:
    """A digest of what the reference backend's answers depend on beyond the suite's own code:
    its package's files and the versions of the libraries it computes with."""
    import importlib.util

    import ml_dtypes
    import numpy
    import onnx

    digest = hashlib.sha256(f"{numpy.__version__}\0{onnx.__version__}\0{ml_dtypes.__version__}\0".encode())
    spec = importlib.util.find_spec("reference_backend")  # found, not imported: the cache stays below it
    for location in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(Path(location).rglob("*.py")):
            digest.update(f"{path.relative_to(location)}\0".encode() + path.read_bytes())
    return digest.hexdigest()[:24]


def expansion_cache(config, case_dir: Path, limits: Limits) -> ExpansionCache | None:
    """The cache: the user's own for the bundled cases (every directory shares it), pytest's cache
    directory for a ``--cases`` directory of one's own (``-p no:cacheprovider`` turns either off);
    None where none can be made (a file in its place, a read-only tree, no cache key): the run
    then loads everything itself."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    try:
        shared = shared_cache_directory() if _bundled(case_dir) else None
        return ExpansionCache(shared or cache.mkdir("conformance-items"), case_dir, limits)
    except OSError:
        return None


def cache_found_in(directory: Path, case_dir: Path, limits: Limits) -> ExpansionCache | None:
    """The cache that a run from ``directory`` (its pytest rootdir) left, for a command outside
    pytest (``conformance repro``) to read: the user's own for the bundled cases; None where there
    is none."""
    shared = shared_cache_directory() if _bundled(case_dir) else None
    entry = shared or directory / ".pytest_cache" / "d" / "conformance-items"
    try:
        return ExpansionCache(entry, case_dir, limits) if entry.is_dir() and not entry.is_symlink() else None
    except OSError:  # no cache key can be kept: uncached
        return None


def _bundled(case_dir: Path) -> bool:
    return case_dir.resolve() == bundled_case_dir().resolve()


class ExpansionCache:
    def __init__(self, directory: Path, case_dir: Path, limits: Limits):
        self.directory, self.digest, self.key = directory, suite_digest(case_dir, limits), user_key()

    def registry(self, case_dir: Path, limits: Limits) -> dict[str, Ambiguity]:
        return self._cached(f"registry{_short(case_dir)}", lambda: load_registry(case_dir, limits), "registry")

    def items(self, file: Path, registry: dict[str, Ambiguity], limits: Limits,
              wanted: Callable[[str], bool] | None = None) -> list[Item]:
        """``file``'s items; with ``wanted``, those of the parts that hold an id it takes (a pasted
        repro line decodes one part of 8,118 items' file, not all of it)."""
        ids = self._load(f"{_short(file)}-ids", "ids")
        parts = [] if ids is None else range(-(-len(ids) // PART_ITEMS)) if wanted is None else \
            sorted({n // PART_ITEMS for n, item_id in enumerate(ids) if wanted(item_id)})
        found: list[Item] = []
        for part in parts:
            kept = self._load(f"{_short(file)}-part{part}", "items")
            if kept is None or [i.id for i in kept] != ids[part * PART_ITEMS:(part + 1) * PART_ITEMS]:
                ids = None  # a part lost or not of these ids
                break
            found.extend(kept)
        if ids is None:  # expanded again, and the items returned as expanded, not decoded back
            expanded = self._expanded(file, registry, limits)
            return expanded if wanted is None else [i for i in expanded if wanted(i.id)]
        return found

    def ids(self, file: Path, registry: dict[str, Ambiguity], limits: Limits) -> list[str]:
        """The ids of ``file``'s items, kept apart from the items: a run that selects one item by
        its id (a pasted repro line) decodes only the part of the file that holds it."""
        kept = self._load(f"{_short(file)}-ids", "ids")
        return kept if kept is not None else [i.id for i in self._expanded(file, registry, limits)]

    def _expanded(self, file: Path, registry: dict[str, Ambiguity], limits: Limits) -> list[Item]:
        """``file`` expanded, and stored: its ids, and its items in parts of PART_ITEMS."""
        items = expand_file(file, registry, limits)
        self._prune(file)
        for start in range(0, len(items), PART_ITEMS):
            self._store(f"{_short(file)}-part{start // PART_ITEMS}", items[start:start + PART_ITEMS])
        self._store(f"{_short(file)}-ids", [i.id for i in items])
        return items

    def _prune(self, file: Path) -> None:
        """Entries of other keys: ``file``'s parts under an earlier key (the names this expansion
        writes may not replace them all), and any entry of another key left unchanged for
        STALE_DAYS (another clone's, a suite since changed: each clone and version has keys of its
        own, and the user's cache held 409 MB of them). Only regular files of the cache's names."""
        cutoff = time.time() - STALE_DAYS * 86400
        current = (f"{self.digest}-", f"{self._values_key()}-")
        with contextlib.suppress(OSError):
            for entry in self.directory.glob("*.json"):
                if entry.name.startswith(current) or not ENTRY_NAME.fullmatch(entry.name):
                    continue
                info = os.lstat(entry)
                if stat.S_ISREG(info.st_mode) and (info.st_mtime < cutoff or f"-{_short(file)}-part" in entry.name):
                    entry.unlink(missing_ok=True)

    def _values_key(self) -> str:
        return hashlib.sha256(f"{self.digest}\0{reference_digest()}".encode()).hexdigest()[:24]

    def values(self, seed: int) -> ItemValues:
        """What items compute when they run at ``seed`` (see ItemValues), kept beside them."""
        return ItemValues(self.directory, self._values_key(), seed, self.key)

    def _cached(self, name: str, compute: Callable[[], T], kind: str) -> T:
        """``compute()``, or what an earlier run stored of it."""
        value = self._load(name, kind)
        if value is None:
            value = compute()
            self._store(name, value)
        return value

    def _load(self, name: str, kind: str) -> Any:
        """What an earlier run stored under ``name``, or None. Whatever stands in the cache's
        place (a planted file, a directory, a FIFO, a link to /dev/zero, a read-only or missing
        directory) is None, which means computing again, never fewer items or an error."""
        entry = self.directory / f"{self.digest}-{name}.json"
        try:
            value = codec.loads(unseal(self.key, entry.name, read_regular(entry, MAX_ENTRY_BYTES, follow_links=False)))
        except (ReadRefused, ValueError):  # CacheCorrupt is a ValueError
            return None
        return value if _is_a(value, kind) else None

    def _store(self, name: str, value: object) -> None:
        try:
            for stale in self.directory.glob(f"*-{name}.json"):  # the same thing under older keys
                stale.unlink(missing_ok=True)
            entry = self.directory / f"{self.digest}-{name}.json"
            write_atomically(entry, seal(self.key, entry.name, codec.dumps(value)), private=True)
        except OSError:  # an unwritable cache costs the next run its start, nothing else
            pass


class ItemValues:
    """Values that items compute when they run at one seed, kept between runs: an item's model,
    its inputs and the reference backend's answers for them (``conformance.judge.oracle``) cost
    more than most backends take to run it, and they are the same in every run until the case
    files, the suite's code, the reference backend or its libraries change (the key).

    A case file's values are kept in fragments: a line of JSON, {item id: [start, end]}, then
    each item's codec entries as JSON at those offsets, so that a run of one item reads only
    its own. Each process that ran some of the file's items writes the values it has (those it
    read and those it computed) to a new fragment and removes the fragments it read, so that two
    xdist workers never lose each other's values; the next run reads them all. A value is read
    as untrusted as the rest of the cache: whatever does not decode is computed again."""

    def __init__(self, directory: Path, key: str, seed: int, secret: bytes):
        self.directory, self.key, self.seed, self.secret = directory, key, seed, secret
        self.read: dict[Path, tuple[dict[str, bytes], list[Path]]] = {}  # file -> (JSON by id, fragments read)
        self.computed: dict[Path, dict[str, bytes]] = {}
        self.unverified: set[Path] = set()  # files with fragments that did not verify: pruned at save

    def get(self, file: Path, item_id: str) -> Any:
        """The value stored for the item (by an earlier run, or by this one: with several
        backends under test each item runs once on each), or None."""
        text = self.computed.get(file, {}).get(item_id) or self._read(file)[0].get(item_id)
        try:
            return None if text is None else codec.decode(json.loads(text))
        except (ValueError, RecursionError):  # CacheCorrupt is a ValueError
            return None

    def put(self, file: Path, item_id: str, value: Any) -> None:
        self.computed.setdefault(file, {})[item_id] = json.dumps(codec.encode(value), separators=(",", ":"),
                                                                 allow_nan=True).encode()

    def save(self) -> None:
        """One new fragment per case file with values computed in this process, or with
        fragments that did not verify (which it replaces)."""
        for file in [*self.computed, *(self.unverified - set(self.computed))]:
            computed = self.computed.get(file, {})
            stored, fragments = self._read(file)
            try:
                for stale in self.directory.glob(f"*-values-{_short(file)}-*.json"):  # under older keys
                    if not stale.name.startswith(f"{self.key}-"):
                        stale.unlink(missing_ok=True)
                if stored or computed:
                    name = f"{self._prefix(file)}{os.getpid()}-{time.monotonic_ns()}.json"
                    write_atomically(self.directory / name, seal(self.secret, self._prefix(file),
                                                                 _fragment({**stored, **computed})), private=True)
                for fragment in fragments:
                    fragment.unlink(missing_ok=True)
            except OSError:  # an unwritable cache costs the next run the time to compute them again
                pass
        self.computed.clear()
        self.read.clear()
        self.unverified.clear()

    def _prefix(self, file: Path) -> str:
        return f"{self.key}-values-{_short(file)}-{self.seed}-"

    def _read(self, file: Path) -> tuple[dict[str, bytes], list[Path]]:
        """The values of ``file``'s fragments that verify, and every fragment found: the next save
        removes them all, so planted or stale ones are pruned. Bounded in number and in total
        bytes: past either bound nothing more is read (and all are removed all the same)."""
        if file not in self.read:
            texts: dict[str, bytes] = {}
            fragments = sorted(self.directory.glob(f"{self._prefix(file)}*.json"))
            budget = MAX_ENTRY_BYTES
            if len(fragments) > MAX_FRAGMENTS:
                self.unverified.add(file)
            for fragment in fragments if len(fragments) <= MAX_FRAGMENTS else []:
                try:
                    blob = read_regular(fragment, budget, follow_links=False)
                    budget -= len(blob)
                    texts.update(_entries(unseal(self.secret, self._prefix(file), blob)))
                except (ReadRefused, ValueError, RecursionError):
                    self.unverified.add(file)
            self.read[file] = texts, fragments
        return self.read[file]


def _fragment(texts: dict[str, bytes]) -> bytes:
    index, offset = {}, 0
    for item_id, text in texts.items():
        index[item_id] = [offset, offset + len(text)]
        offset += len(text)
    return json.dumps(index, separators=(",", ":")).encode() + b"\n" + b"".join(texts.values())


def _entries(data: bytes) -> dict[str, bytes]:
    """A fragment's items and the bytes of each one's value; ValueError for anything else."""
    head, newline, body = data.partition(b"\n")
    index = json.loads(head)
    if not newline or not isinstance(index, dict):
        raise ValueError("not a fragment")
    texts = {}
    for item_id, place in index.items():
        if not (isinstance(place, list) and len(place) == 2 and all(type(n) is int for n in place)
                and 0 <= place[0] <= place[1] <= len(body)):
            raise ValueError("not a fragment")
        texts[item_id] = body[place[0]:place[1]]
    return texts


def _is_a(value: object, kind: str) -> bool:
    """The cached whole is what was stored: a list of items, a list of ids, or a registry."""
    if kind in ("items", "ids"):
        return isinstance(value, list) and all(isinstance(v, Item if kind == "items" else str) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, Ambiguity) for k, v in value.items())


def _short(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


def expand_file(file: Path, registry: dict[str, Ambiguity], limits: Limits) -> list[Item]:
    return [item for case in load_case_file(file, registry, limits) for item in expand(case)]

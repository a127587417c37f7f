"""The defect models' kit: a model (``DefectModel``), the facts it applies to (``Facts``), and the
builders of its backend, each a thin subclass of the reference that overrides one of its hooks."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import ml_dtypes
import numpy as np

from reference_backend import ReferenceBackend

from ....semantics import OPENVINO_DOMAIN, Axis



def base(cls: type[ReferenceBackend], hook: str) -> Callable:
    """What a model's ``hook`` builds on: the reference's own, bound to ``cls`` so that it follows
    ``cls.readings`` (a model run under another reading of an open question: ``cls.configured``),
    or, in a pair of models that both replace ``hook``, the second model's (``stacked``)."""
    below = getattr(cls, "_below", {}).get(hook)
    if below is not None:
        return getattr(below, hook).__func__.__get__(below)
    return getattr(SharedReference, hook).__func__.__get__(cls)


def hooks(model: type[ReferenceBackend]) -> set[str]:
    """The reference's hooks that ``model`` replaces (a pair of models: both's)."""
    return {name for cls in model.__mro__ if cls not in SharedReference.__mro__
            for name, value in vars(cls).items() if isinstance(value, classmethod) and not name.startswith("_")}


def stacked(upper: type[ReferenceBackend], lower: type[ReferenceBackend]) -> type[ReferenceBackend]:
    """Both models at once: a hook both replace is ``upper``'s built on ``lower``'s. An ``upper``
    that is itself two models stacked goes on top whole: (a over b) over c is a over (b over c)
    (the pair's own order would be lost under the new pair's, and b skipped)."""
    parts = vars(upper).get("_parts")
    if parts is not None:
        return stacked(parts[0], stacked(parts[1], lower))
    return type("Pair", (upper, lower), {"_below": dict.fromkeys(hooks(upper) & hooks(lower), lower),
                                         "_parts": (upper, lower)})


@dataclass(frozen=True)
class Facts:
    """What a model's relevance is decided on, read from an item without running anything."""

    op: str
    domain: str
    dtype: Any
    attributes: dict
    wants_indices: bool
    output_shape_given: bool
    pools_upstream: bool = False  # a MaxUnpool fed by a MaxPool in the same model (a round trip)

    @property
    def pools(self) -> bool:
        return self.op in ("MaxPool", "NhwcMaxPool") or self.pools_upstream

    @property
    def onnx_pool(self) -> bool:
        return self.pools and self.domain != OPENVINO_DOMAIN

    def has(self, name: str, default: Any = None) -> bool:
        """Whether ``name`` is set to other than ``default`` (absent counts as the default)."""
        value = self.attributes.get(name, default)
        return value is not None and value != default and value != []


@dataclass(frozen=True)
class DefectModel:
    name: str
    title: str  # what the runtime does wrong, as a report line names it
    seen: str  # where such a bug was seen
    backend: type[ReferenceBackend]
    applies: Callable[[Facts], bool] = lambda facts: True  # False where the model cannot change an answer
    touches: str = "any"  # the only output it can change ("Y" or "Indices"), or "any"
    # One bug that shows in several kernels (a runtime's scalar and vector paths): the models of a
    # family are one line of the report, each model a part of it (FAMILIES: its title).
    family: str | None = None
    # A value X must hold for the model to change anything ("nan"): diagnosis leaves it out elsewhere.
    needs: str | None = None
    # The open question whose behaviour the model replaces (its answer is its own under any reading
    # of it): diagnosis does not read it under that question's readings.
    decides: str | None = None

    @property
    def composite(self) -> bool:
        """Whether it is two bugs in one kernel (float16 pooled in float32 by a seeded loop): where a
        model of one of them alone also reproduces an item, the item shows only that one."""
        return "_parts" in vars(self.backend)

    @property
    def retypes(self) -> bool:
        """Whether it pools in another type (a narrower one, or float16 in float32): beside another bug
        it changes that bug's answer (a seed of float32's lowest, cast back to float64 or left in
        float32), so diagnosis tries it with each first."""
        return getattr(self.backend, "retypes", False)


def variant(**hooks: Callable) -> type[ReferenceBackend]:
    """The reference backend with some hooks replaced (each a function of cls and the hook's arguments)."""
    return type("Defect", (SharedReference,), {name: classmethod(hook) for name, hook in hooks.items()})


# While one item is diagnosed: the reference's pooling of an input, by the input's bytes, the axes
# and the readings. Every model pools through it (most rewrite its results; one that rewrites the
# windows pools other axes, which a pair with it meets again), and each would compute it again; the
# change functions make new arrays, never writing into the ones they are given.
_REFERENCE_POOLS: dict[tuple, Any] | None = None  # and the folds of _nan_folded, the first-equal searches


@contextlib.contextmanager
def reference_pools_shared() -> Iterator[None]:
    global _REFERENCE_POOLS
    _REFERENCE_POOLS = {}
    try:
        yield
    finally:
        _REFERENCE_POOLS = None


def shared(key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept under ``key`` while one item is diagnosed (``reference_pools_shared``):
    the models tried on one item meet the same folds and searches again."""
    if _REFERENCE_POOLS is None:
        return compute()
    if key not in _REFERENCE_POOLS:
        _REFERENCE_POOLS[key] = compute()
    return _REFERENCE_POOLS[key]


class SharedReference(ReferenceBackend):
    """The reference under every model, its pooling computed once per input, axes and readings while
    one item is diagnosed (not a hook a model replaces: ``hooks`` leaves it out)."""

    @classmethod
    def pool(cls, x: np.ndarray, axes: tuple[Axis, ...], storage_order: int = 0,
             with_indices: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        if _REFERENCE_POOLS is None:
            return super().pool(x, axes, storage_order, with_indices)
        key = ("pool", str(cls.readings), x.dtype.str, x.shape, x.tobytes(), tuple(axes), storage_order, with_indices)
        if key not in _REFERENCE_POOLS:
            _REFERENCE_POOLS[key] = super().pool(x, axes, storage_order, with_indices)
        return _REFERENCE_POOLS[key]


def pooled(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the pooling: change(x, axes, storage_order, pool) -> (y, indices), indices always
    computed; ``pool(x, axes, storage_order)`` is the reference's (in a pair, the other model's)."""
    def pool(cls, x, axes, storage_order=0, with_indices=True):
        below = base(cls, "pool")
        return change(x, axes, storage_order, lambda x, axes, storage_order=0: below(x, axes, storage_order, True))
    return variant(pool=pool)


def with_results(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the pooling's results: change(y, indices, x, axes) -> (y, indices)."""
    def wrapped(x, axes, storage_order, pool):
        y, indices = pool(x, axes, storage_order)
        return change(y, indices, x, axes)
    return pooled(wrapped)


def through(dtype: Any, only: Any, saturating: bool = False) -> type[ReferenceBackend]:
    """X of element type ``only`` pooled in ``dtype`` (rounded or wrapped on the way, or with
    ``saturating`` clamped to its finite range, infinities included) and cast back."""
    def through_pool(x, axes, storage_order, pool):
        if x.dtype != only:
            return pool(x, axes, storage_order)
        with np.errstate(over="ignore", invalid="ignore"):
            narrowed = (np.clip(x, finfo_of(dtype).min, finfo_of(dtype).max) if saturating else x).astype(dtype)
        y, indices = pool(narrowed, axes, storage_order)
        if np.issubdtype(only, np.integer) and np.issubdtype(y.dtype, np.floating):
            y = _clamped_to(only, y)
        with np.errstate(over="ignore", invalid="ignore"):
            return y.astype(only), indices
    model = pooled(through_pool)
    model.retypes = True  # type: ignore[attr-defined]
    return model


def _clamped_to(integer: Any, y: np.ndarray) -> np.ndarray:
    """Floats clamped to the range of ``integer`` before they are cast to it, as a converting kernel
    does (C leaves an out-of-range cast undefined; numpy's gives the lowest integer): the top is the
    largest float of y's type within range (2^31 - 128 for float32 into int32), as OpenVINO's CPU
    plugin gives int32 and int64 maxima of 2147483647."""
    info = np.iinfo(integer)
    top = y.dtype.type(info.max)
    while int(top) > info.max:
        top = np.nextafter(top, y.dtype.type(0))
    return np.clip(y, y.dtype.type(info.min), top)


def finfo_of(dtype):
    return ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)


def plane_origins(y: np.ndarray, plane: int) -> np.ndarray:
    """The flat index of each output's (n, c) plane's first element, planes of ``plane`` elements,
    shaped to broadcast over y."""
    return np.arange(int(np.prod(y.shape[:2]))).reshape(y.shape[:2] + (1,) * (y.ndim - 2)) * plane


def with_attributes(attrs: dict, **changes) -> dict:
    """``attrs`` with ``changes``; a change to None removes the attribute."""
    return {k: v for k, v in {**attrs, **changes}.items() if v is not None}


def has_pads(facts: Facts) -> bool:
    """Whether a window may reach past the input: explicit pads, SAME, or a rounded-up size."""
    a = facts.attributes
    if facts.domain == OPENVINO_DOMAIN:
        return facts.has("pads_begin") and any(a["pads_begin"]) or facts.has("pads_end") and any(a["pads_end"]) or \
            str(a.get("auto_pad", "")).startswith("same") or a.get("rounding_type", "floor") != "floor"
    return facts.has("pads") and any(a["pads"]) or str(a.get("auto_pad", "")).startswith("SAME") or \
        a.get("ceil_mode", 0) == 1


def of_type(dtype: Any) -> Callable[[Facts], bool]:
    return lambda facts: facts.pools and facts.dtype == dtype


SEEN_FUZZ = "the fuzz's self-test and the mutation self-test (a variant built as a plausible kernel bug)"

"""The edge values of each element type, by class: the values a window or an unpooled position
must be seen to return (lowest, highest, the smallest normal and subnormal of both signs, -0.0,
the infinities, NaN) and values that a sibling type cannot hold (float32's 1 + 2^-23 in float16 or
bfloat16, int64's 2^53 + 1 through float64...), which a kernel computing through that sibling
changes. The `edge_values` input distribution puts them in the answers; `conformance coverage`
checks that they are there."""

from __future__ import annotations

from functools import cache

import ml_dtypes
import numpy as np

from .dtypes import DTYPES

NAN = "nan"
# The value classes every type is asked about, in the coverage table's column order; a type that
# has no value of a class (an integer's infinities) leaves its cell out.
CLASSES = ("neg_inf", "lowest", "neg_normal_min", "neg_subnormal_min", "negative_zero", "subnormal_min",
           "normal_min", "sibling", "highest", "inf", NAN)

# Values the type holds and a sibling type does not (exactly or at all), by label.
SIBLING_VALUES: dict[str, dict[str, float]] = {
    "float16": {"inexact_in_bfloat16": 1 + 2**-10},
    "bfloat16": {"beyond_float16": 2.0**40},
    "float32": {"inexact_in_16_bit_types": 1 + 2**-23, "beyond_float16": 100000.0},
    "float64": {"inexact_in_float32": 1 + 2**-52, "beyond_float32": 1.0e300},
    "int8": {"negative_not_in_uint8": -1},
    "uint8": {"high_bit_not_in_int8": 128},
    "int32": {"inexact_in_float32": 2**24 + 1, "negative_inexact_in_float32": -(2**24 + 1)},
    "int64": {"inexact_in_float64": 2**53 + 1, "beyond_int32": 2**31, "below_int32": -(2**31) - 1},
}


@cache
def edge_values(dtype: str) -> tuple[tuple[str, object], ...]:
    """(label, value) for every class the type has but NaN, in ascending order of value; the
    sibling values are labelled `sibling:<label>`."""
    numpy = DTYPES[dtype].numpy
    if DTYPES[dtype].is_integer:
        integers = np.iinfo(numpy)
        values: dict[str, float] = {"lowest": int(integers.min), "highest": int(integers.max)}
    else:
        floats = ml_dtypes.finfo(numpy)
        tiny, normal = float(floats.smallest_subnormal), float(floats.smallest_normal)
        values = {"neg_inf": -np.inf, "lowest": float(floats.min), "neg_normal_min": -normal,
                  "neg_subnormal_min": -tiny, "negative_zero": -0.0, "subnormal_min": tiny,
                  "normal_min": normal, "highest": float(floats.max), "inf": np.inf}
    values |= {f"sibling:{label}": value for label, value in SIBLING_VALUES[dtype].items()}
    # -0.0 sorts between the negatives and the smallest positive subnormal
    return tuple(sorted(values.items(), key=lambda kv: (kv[1], not np.signbit(kv[1]))))


def column(label: str) -> str:
    """The coverage column of a label (`sibling:<label>` -> `sibling`)."""
    return label.partition(":")[0]


def classes_of(dtype: str) -> tuple[str, ...]:
    """The columns the type has a value in."""
    found = {column(label) for label, _ in edge_values(dtype)}
    if not DTYPES[dtype].is_integer:
        found.add(NAN)
    return tuple(c for c in CLASSES if c in found)


def fill(shape: tuple[int, ...], dtype: str, rng: np.random.Generator, with_nan: bool) -> np.ndarray:
    """Plane p (over N * C) takes the p-th edge value (cycling, NaN first where asked for and the
    type has it) at three elements in four and lower edge values elsewhere, so the value is the
    maximum of nearly every window of its plane and each lower one of a few."""
    kind = DTYPES[dtype]
    labels = edge_values(dtype)
    cycle = list(range(len(labels)))
    if with_nan and kind.is_integer:  # no NaN: the planes take their values in another order
        cycle = cycle[1:] + cycle[:1]
    elif with_nan:
        cycle = [len(labels)] + cycle
    table = kind.cast([value for _, value in labels] + ([np.nan] if with_nan and not kind.is_integer else []))
    count = int(np.prod(shape, dtype=np.int64))
    planes = int(np.prod(shape[:2], dtype=np.int64)) if len(shape) > 2 else 1
    per_plane = count // planes if planes else 0
    picks = np.empty((planes, per_plane), dtype=np.int64)
    for p in range(planes):
        dominant = cycle[p % len(cycle)]
        below = dominant if dominant == len(labels) else max(dominant, 1)  # NaN's plane: any value below
        picks[p] = np.where(rng.random(per_plane) < 0.75, dominant, rng.integers(0, below, per_plane))
    return table[picks.reshape(-1)].reshape(shape)


def found(values: np.ndarray, dtype: str) -> set[str]:
    """The labels (and `nan`) whose value occurs in ``values``, bit for bit."""
    kind = DTYPES[dtype]
    seen = set()
    if not kind.is_integer and np.isnan(values.astype(np.float64)).any():
        seen.add(NAN)
    flat = values.reshape(-1)
    for label, value in edge_values(dtype):
        want = kind.cast([value])
        bits = flat.view(np.uint8).reshape(flat.size, -1) if flat.size else None
        if bits is not None and (bits == want.view(np.uint8)).all(axis=1).any():
            seen.add(label)
    return seen

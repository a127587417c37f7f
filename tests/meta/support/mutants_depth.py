"""Broken backends for the depth axes (docs/coverage.md, "Depth axes"): each is wrong on one cell of one
table only, as a real kernel is: an edge value of one element type turned into another on one
operator's path (answer values), one degenerate extent refused (degenerate extents), one geometry
attribute dropped beyond 3 spatial axes (rank geometry). Elsewhere each answers as the reference.
The mutation self-test (tests/meta/test_mutants.py) and the fuzz (tests/test_fuzz.py) must find each.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from reference_backend import ReferenceBackend
from tests.meta.support.mutants_paths import OPENVINO_DOMAIN, Call, PathMutant, _attributes, _map_y, _on_path

NHWC_DOMAIN = "com.ms.internal.nhwc"


def _finfo(dtype):
    return ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)


def _subnormals_flushed(call: Call, y: np.ndarray) -> np.ndarray:
    """Denormals-are-zero: a subnormal maximum comes back as a zero of its sign."""
    wide = y.astype(np.float64)
    subnormal = (wide != 0) & (np.abs(wide) < float(_finfo(y.dtype).smallest_normal))
    return np.where(subnormal, np.copysign(0.0, wide), wide).astype(y.dtype)


def _negative_zero_made_positive(call: Call, y: np.ndarray) -> np.ndarray:
    return np.where((y == 0) & np.signbit(y), np.zeros_like(y), y)


def _int64_through_int32(call: Call, y: np.ndarray) -> np.ndarray:
    return y.astype(np.int32).astype(np.int64)  # wraps, as a narrowing conversion does


def _bfloat16_through_float16(call: Call, y: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return y.astype(np.float32).astype(np.float16).astype(ml_dtypes.bfloat16)


def _refused(why: str):
    def broken(call: Call):
        raise RuntimeError(why)
    return broken


def _unpool_without_pads(call: Call) -> dict:
    return {"pads": None}


def _floor(call: Call) -> dict:
    return {"ceil_mode": 0}


def _maxpool(call: Call, dtype=None) -> bool:
    return call.is_pool() and (dtype is None or call.x.dtype == dtype)


def _unpool(call: Call) -> bool:
    return call.node.op_type == "MaxUnpool"


DEPTH_MUTANTS = [
    PathMutant("mlas_float32_subnormals_flushed",
               "ai.onnx MaxPool's float32 path without Indices reads subnormals as zero (denormals-are-zero)",
               _on_path(lambda c: _maxpool(c, np.float32) and not c.wants_indices, _map_y(_subnormals_flushed))),
    PathMutant("unpool_float16_subnormals_flushed",
               "MaxUnpool's float16 scatter flushes subnormal values to zero",
               _on_path(lambda c: _unpool(c) and c.x.dtype == np.float16, _map_y(_subnormals_flushed))),
    PathMutant("nhwc_float32_negative_zero_made_positive",
               "the NHWC float32 kernel's maximum of -0.0 windows comes back +0.0",
               _on_path(lambda c: c.is_pool(NHWC_DOMAIN) and c.x.dtype == np.float32, _map_y(_negative_zero_made_positive))),
    PathMutant("openvino_int64_through_int32",
               "OpenVINO-style: int64 is pooled as int32, so values beyond int32 wrap",
               _on_path(lambda c: c.is_pool(OPENVINO_DOMAIN) and c.x.dtype == np.int64, _map_y(_int64_through_int32))),
    PathMutant("openvino_bfloat16_through_float16",
               "OpenVINO-style: bfloat16 is pooled through float16, so values beyond 65504 become infinities",
               _on_path(lambda c: c.is_pool(OPENVINO_DOMAIN) and c.x.dtype == ml_dtypes.bfloat16,
                        _map_y(_bfloat16_through_float16))),
    PathMutant("unpool_empty_input_refused",
               "MaxUnpool refuses an empty X (N, C or a spatial axis of 0)",
               _on_path(lambda c: _unpool(c) and c.x.size == 0, _refused("empty input"))),
    PathMutant("pool_4d_ceil_ignored",
               "ai.onnx MaxPool beyond 3 spatial axes ignores ceil_mode",
               _on_path(lambda c: _maxpool(c) and c.rank >= 4 and c.attrs.get("ceil_mode", 0) == 1, _attributes(_floor))),
    PathMutant("unpool_4d_pads_ignored",
               "MaxUnpool beyond 3 spatial axes leaves the pads out of its default shape",
               _on_path(lambda c: _unpool(c) and c.rank >= 4 and any(c.attrs.get("pads", ())) and len(c.node.input) < 3,
                        _attributes(_unpool_without_pads))),
]

# Bugs of inputs larger than the fuzz draws (at most MAX_ELEMENTS = 4096 elements and 8 per edge,
# conformance/fuzz/space.py): work split between threads; and of windows over padding only, which
# it never draws (its pads stay below each window's extent). Only the suite's cases reach them.
SUITE_ONLY: set[str] = {"planes_past_a_block_of_64_never_run", "second_thread_pools_the_first_threads_planes",
                        "index_wrapped_where_no_element"}
DEPTH_MUTANTS.append(
    PathMutant("zero_channels_refused",
               "ai.onnx MaxPool refuses an input with C = 0",
               _on_path(lambda c: _maxpool(c) and c.x.ndim > 2 and c.x.shape[1] == 0, _refused("zero channels"))))


def _read_as(readings: str):
    """The reference following other readings of the open questions (each allowed on its own)."""
    backend = ReferenceBackend.configured(readings)

    def broken(call: Call):
        return backend.prepare(call.model).run([call.inputs[vi.name] for vi in call.model.graph.input])
    return broken


# Kernels that read one open question one way on one path and another way elsewhere: every item is
# `divergent` (each reading is allowed), so no item fails; the report's "open questions read
# differently on different paths" must name the question and the path (tests/meta/test_mutants.py).
SPLIT_READING_MUTANTS = [
    (PathMutant("nan_ignored_on_the_indices_path",
                "ai.onnx MaxPool's kernel with Indices skips NaN (a compare that is false for NaN), the one "
                "without propagates it",
                _on_path(lambda c: _maxpool(c) and c.wants_indices, _read_as("nan-in-window:nan-ignored"))),
     "nan-in-window", "indices with"),
    (PathMutant("same_negative_total_split_beyond_2d",
                "SAME with stride over the kernel extent: the 3-D kernel splits the negative total, the others "
                "clamp it to zero",
                _on_path(lambda c: c.is_pool() and c.rank == 3, _read_as("same-pad-negative:negative-split"))),
     "same-pad-negative", "rank 3d"),
]

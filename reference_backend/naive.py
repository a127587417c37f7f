"""The specification: MaxPool and MaxUnpool as deliberately naive nested loops over every output
and window element, which the fast path (``maxpool.py``, ``maxunpool.py``) is checked against
(``tests/test_reference_vs_naive.py`` on random problems, ``conformance lock --update`` on every
derived item whose expectation moves).

It shares no code with the rest of the package, nor with ``conformance.semantics`` (an
import-linter contract in pyproject.toml keeps it so). Output sizes and SAME pads are the
documents' formulas written out with real division and math.floor/ceil, as printed; the windows
are enumerated one element at a time. Where the documents are open (cases/ambiguities.yaml) it
follows the registry's default reading, and the alternative ones the fast path implements for
the element comparison, given as ``readings`` ({question: reading}; a ``Readings`` works too):

* ``ceil-window-starts-in-padding``: ceil_mode drops a window starting past the input
  (``drop-window-starting-past-input``) or keeps it (``formula-as-printed``);
* ``nan-in-window``: the first NaN is selected (``nan-propagates``), NaN never compares greater,
  so it stays only where it comes first (``nan-ignored``), or NaN is passed over, a window of NaN
  only being one without elements (``nan-never-selected``);
* ``signed-zero-tie``: of equal maxima the first is kept (``first-in-window``), +0.0 beats -0.0
  (``positive-zero``), or the last is kept (``last-in-window``);
* ``storage-order-scope``: storage_order=1 numbers the spatial positions column-major within a
  plane (``spatial-column-major``) or the whole tensor column-major (``tensor-column-major``);
* ``maxunpool-duplicate-indices``: of values sent to one position the last in row-major order of X
  wins (``last-write-wins``) or the first (``first-write-wins``).

An all-padding window gives -inf / the integer minimum with index -1.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Mapping

import numpy as np

DEFAULT_READINGS = {
    "ceil-window-starts-in-padding": "drop-window-starting-past-input",
    "nan-in-window": "nan-propagates",
    "signed-zero-tie": "first-in-window",
    "storage-order-scope": "spatial-column-major",
    "maxunpool-duplicate-indices": "last-write-wins",
}


def _reading(readings: Mapping[str, str] | Any, question: str) -> str:
    return readings[question] if readings is not None else DEFAULT_READINGS[question]


class NaiveError(ValueError):
    pass


def output_geometry(size, kernel, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode, drop_late_window=True):
    """(output size, begin pad) of one axis, by the formulas of MaxPool-10..22."""
    effective = (kernel - 1) * dilation + 1
    if auto_pad == "VALID":
        return math.ceil((size - effective + 1) / stride), 0
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = math.ceil(size / stride)
        pad = max(0, (out - 1) * stride + effective - size)
        begin = math.floor(pad / 2) if auto_pad == "SAME_UPPER" else math.ceil(pad / 2)
        return out, begin
    total = size + pad_begin + pad_end - effective
    if ceil_mode:
        out = math.ceil(total / stride + 1)
        if drop_late_window and (out - 1) * stride >= size + pad_begin:  # the last window would start past the input
            out -= 1
    else:
        out = math.floor(total / stride + 1)
    return out, pad_begin


def naive_max_pool(x, kernel_shape, strides=None, pads=None, dilations=None,
                   auto_pad="NOTSET", ceil_mode=0, storage_order=0, readings=None):
    rank = len(kernel_shape)
    drop = _reading(readings, "ceil-window-starts-in-padding") == "drop-window-starting-past-input"
    nan_reading = _reading(readings, "nan-in-window")
    zero_tie = _reading(readings, "signed-zero-tie")
    whole_tensor = _reading(readings, "storage-order-scope") == "tensor-column-major"
    strides = strides or [1] * rank
    dilations = dilations or [1] * rank
    pads = pads or [0] * (2 * rank)
    n_batch, n_channel = x.shape[:2]
    spatial = x.shape[2:]
    outs, begins = [], []
    for i in range(rank):
        out, begin = output_geometry(spatial[i], kernel_shape[i], strides[i], dilations[i],
                                     pads[i], pads[i + rank], auto_pad, ceil_mode, drop)
        if out < 0:
            raise NaiveError(f"negative output size on axis {i}")
        outs.append(out)
        begins.append(begin)

    y = np.zeros([n_batch, n_channel] + outs, dtype=x.dtype)
    indices = np.zeros([n_batch, n_channel] + outs, dtype=np.int64)
    for position, best_at in _kept_elements(x, outs, begins, kernel_shape, strides, dilations, nan_reading, zero_tie):
        if best_at is None:
            y[position], indices[position] = _lowest(x.dtype), -1
            continue
        n, c = position[:2]
        y[position] = x[(n, c) + tuple(best_at)]
        indices[position] = _index(n, c, best_at, x.shape, storage_order, whole_tensor)
    return y, indices


def _kept_elements(x, outs, begins, kernel, strides, dilations, nan_reading="nan-propagates",
                   zero_tie="first-in-window"):
    """(output position, the window element kept there) for every output position of every plane:
    the first element no later one is preferred to, by the readings (None for a window that holds
    no element of the input)."""
    rank, spatial = len(kernel), x.shape[2:]
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for o in itertools.product(*[range(v) for v in outs]):
                best, best_at = None, None
                for j in itertools.product(*[range(k) for k in kernel]):
                    at = [o[i] * strides[i] - begins[i] + j[i] * dilations[i] for i in range(rank)]
                    if any(p < 0 or p >= spatial[i] for i, p in enumerate(at)):
                        continue
                    value = x[(n, c) + tuple(at)].item()  # exact: a Python int for integer types
                    if nan_reading == "nan-never-selected" and math.isnan(value):
                        continue
                    if best_at is None or _prefers(value, best, nan_reading, zero_tie):
                        best, best_at = value, at
                yield (n, c) + o, best_at


def _lowest(dtype):
    """What a window without an element gives: the type's lowest value."""
    return np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else -np.inf


def _prefers(value, best, nan_reading, zero_tie):
    """Whether the window's next element ``value`` replaces the one kept, ``best``."""
    if nan_reading == "nan-propagates" and math.isnan(value) and not math.isnan(best):
        return True
    if value == 0 and best == 0 and zero_tie != "first-in-window":
        return zero_tie == "last-in-window" or (math.copysign(1, value) > 0 > math.copysign(1, best))
    return value > best  # False for a NaN on either side: under nan-ignored a NaN first stays


def _index(n, c, at, shape, storage_order, whole_tensor):
    """The flat index of element ``at`` of plane (n, c): row-major, or column-major (storage_order=1)
    within the plane or, under ``tensor-column-major``, over the whole tensor."""
    position = [n, c, *at]
    if storage_order == 0:
        order = range(len(shape))
    elif whole_tensor:
        order = reversed(range(len(shape)))
    else:
        within, step = 0, 1
        for i in range(2, len(shape)):
            within += at[i - 2] * step
            step *= shape[i]
        return (n * shape[1] + c) * step + within
    flat = 0
    for i in order:
        flat = flat * shape[i] + position[i]
    return flat


def naive_max_unpool(x, indices, kernel_shape, strides=None, pads=None, output_shape=None, readings=None):
    rank = len(kernel_shape)
    strides = strides or [1] * rank
    pads = pads or [0] * (2 * rank)
    if output_shape is None:
        output_shape = list(x.shape[:2]) + [
            (x.shape[2 + i] - 1) * strides[i] - pads[i] - pads[i + rank] + kernel_shape[i]
            for i in range(rank)
        ]
    y = np.zeros(output_shape, dtype=x.dtype)
    flat = y.reshape(-1)
    first_wins = _reading(readings, "maxunpool-duplicate-indices") == "first-write-wins"
    written = set()
    for position in itertools.product(*[range(v) for v in x.shape]):
        target = int(indices[position])
        if not 0 <= target < flat.size:
            raise NaiveError(f"index {target} out of range")
        if not (first_wins and target in written):
            flat[target] = x[position]
        written.add(target)
    return y


def naive_activation(y, low, high):
    """The clamp of ONNX Runtime's fused activation, one element at a time: a value below ``low``
    becomes ``low`` (the smallest integer at or above it, for an integer Y), one above ``high``
    becomes ``high``; NaN and -0.0 stay as they are."""
    out = y.copy()
    integer = np.issubdtype(y.dtype, np.integer)
    for position in itertools.product(*[range(v) for v in y.shape]):
        value = float(y[position])
        if value < low:
            out[position] = math.ceil(low) if integer else low
        elif value > high:
            out[position] = math.floor(high) if integer else high
    return out


def naive_openvino_max_pool(x, kernel, strides, pads_begin, pads_end, dilations=None, auto_pad="explicit",
                            rounding_type="floor", axis=0, index_element_type="i64"):
    """OpenVINO MaxPool-1/-8/-14 as its documents define it (001_..., 004_...; MaxPool-14's
    pooling_shape_rules.rst), with the readings the registry names: the formulas parenthesised as
    MaxPool-8 prints them, rounding_type applying to valid as the examples show, same_* giving
    ceil(size / stride), no window dropped but under ceil_torch, which drops a last window that
    would start in the end padding."""
    rank = len(kernel)
    dilations = dilations or [1] * rank
    spatial = x.shape[2:]
    outs, begins = [], []
    for i in range(rank):
        effective = (kernel[i] - 1) * dilations[i] + 1
        if auto_pad in ("same_upper", "same_lower"):
            out = math.ceil(spatial[i] / strides[i])
            pad = max(0, (out - 1) * strides[i] + effective - spatial[i])
            begin = math.floor(pad / 2) if auto_pad == "same_upper" else math.ceil(pad / 2)
        else:
            begin, end = (pads_begin[i], pads_end[i]) if auto_pad == "explicit" else (0, 0)
            share = (spatial[i] + begin + end - effective) / strides[i]
            out = (math.floor(share) if rounding_type == "floor" else math.ceil(share)) + 1
            if rounding_type == "ceil_torch" and (out - 1) * strides[i] >= spatial[i] + begin:
                out -= 1
        outs.append(out)
        begins.append(begin)
    y = np.zeros(list(x.shape[:2]) + outs, dtype=x.dtype)
    indices = np.zeros(list(x.shape[:2]) + outs, dtype=np.int64)
    bound = 1
    for extent in x.shape[axis % x.ndim:]:
        bound *= extent
    plane = 1
    for extent in spatial:
        plane *= extent
    for position, best_at in _kept_elements(x, outs, begins, kernel, strides, dilations):
        if best_at is None:
            y[position], indices[position] = _lowest(x.dtype), -1
            continue
        n, c = position[:2]
        y[position] = x[(n, c) + tuple(best_at)]
        within = 0
        for i in range(rank):
            within = within * spatial[i] + best_at[i]
        indices[position] = ((n * x.shape[1] + c) * plane + within) % bound
    return y, indices.astype(np.int32 if index_element_type == "i32" else np.int64)

"""MaxUnpool's fast path: scatter the pooled values into zeros at their flat indices, checked
against the naive loops of ``naive.py``.

Where the documents are open (see ``cases/ambiguities.yaml``) it follows ``readings``; by default:

* with ``output_shape``, the indices address the output tensor itself, so a MaxPool of any input
  size round-trips (``maxunpool-output-shape-index-space``);
* when indices repeat, the value latest in row-major order of X wins (``maxunpool-duplicate-indices``);
* any output_shape that holds the indices is accepted (``maxunpool-output-shape-smaller``,
  ``maxunpool-output-shape-batch-channels``).
"""

from __future__ import annotations

import numpy as np

from conformance.semantics import DEFAULT, REJECTED, Readings


def max_unpool(x: np.ndarray, indices: np.ndarray, output_shape: tuple[int, ...],
               default_shape: tuple[int, ...] | None = None, readings: Readings = DEFAULT) -> np.ndarray:
    if indices.shape != x.shape:
        raise ValueError(f"I has shape {indices.shape} but X has shape {x.shape}; they must match")
    default_shape = tuple(default_shape or output_shape)
    output_shape = tuple(output_shape)
    if readings["maxunpool-output-shape-smaller"] == REJECTED and np.prod(output_shape) < np.prod(default_shape):
        raise ValueError(f"output_shape {output_shape} is smaller than the default shape {default_shape}")
    if readings["maxunpool-output-shape-batch-channels"] == REJECTED and output_shape[:2] != default_shape[:2]:
        raise ValueError(f"output_shape {output_shape} changes the batch or channel size of {default_shape}")
    if readings["maxunpool-duplicate-indices"] == "first-write-wins":  # the earliest writer last
        x, indices = x.reshape(-1)[::-1].copy(), indices.reshape(-1)[::-1].copy()
    if readings["maxunpool-output-shape-index-space"] == "inferred-shape-embedded" and output_shape != default_shape:
        block = scatter(x, indices, default_shape)
        y = np.zeros(output_shape, x.dtype)
        common = tuple(slice(0, min(d, r)) for d, r in zip(default_shape, output_shape))
        y[common] = block[common]
        return y
    return scatter(x, indices, output_shape)


def scatter(x: np.ndarray, indices: np.ndarray, output_shape: tuple[int, ...]) -> np.ndarray:
    """Zeros of ``output_shape`` holding each value of ``x`` at its flat index; of repeated indices,
    the value latest in row-major order of ``x`` wins."""
    size = int(np.prod(output_shape, dtype=np.int64))
    flat = indices.reshape(-1)
    outside = (flat < 0) | (flat >= size)
    if outside.any():
        bad = int(flat[outside][0])
        raise ValueError(f"index {bad} is outside the output tensor of {size} elements {tuple(output_shape)}")
    # numpy does not promise which of repeated indices a scatter keeps: record a writer per
    # index, raise it to the latest one where another won, then let every writer of an index
    # write that one's value, so that the order of the writes no longer matters. The output's
    # own buffer records the writers when its elements are wide enough (one large allocation,
    # not two: fresh pages cost more than the scatter).
    y = np.zeros(size, dtype=x.dtype)
    position = np.dtype(f"int{8 * x.dtype.itemsize}") if x.dtype.itemsize >= 4 else np.dtype(np.int64)
    if flat.size >= np.iinfo(position).max:
        position = np.dtype(np.int64)
    writer = y.view(position) if position.itemsize == x.dtype.itemsize else np.zeros(size, position)
    order = np.arange(flat.size, dtype=position)
    writer[flat] = order
    kept = writer[flat]
    lost = np.flatnonzero(kept != order)
    if lost.size:
        np.maximum.at(writer, flat[lost], lost.astype(position))
        kept = writer[flat]
    y[flat] = x.reshape(-1)[kept]  # every index written holds its writer's value; the rest are still 0
    return y.reshape(output_shape)

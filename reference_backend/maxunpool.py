"""MaxUnpool: scatter the pooled values into zeros at their flat indices.

Two choices where the documents are open (see ``cases/ambiguities.yaml``):

* with ``output_shape``, the indices address the output tensor itself, so a MaxPool of any input
  size round-trips (``maxunpool-output-shape-index-space``);
* when indices repeat, the value latest in row-major order of X wins (``maxunpool-duplicate-indices``).
"""

from __future__ import annotations

import numpy as np


def max_unpool(x: np.ndarray, indices: np.ndarray, output_shape: tuple[int, ...]) -> np.ndarray:
    if indices.shape != x.shape:
        raise ValueError(f"I has shape {indices.shape} but X has shape {x.shape}; they must match")
    size = int(np.prod(output_shape, dtype=np.int64))
    flat = indices.reshape(-1)
    outside = (flat < 0) | (flat >= size)
    if outside.any():
        bad = int(flat[outside][0])
        raise ValueError(f"index {bad} is outside the output tensor of {size} elements {tuple(output_shape)}")
    y = np.zeros(size, dtype=x.dtype)
    # Keep the last occurrence of each index: unique() on the reversed order finds it.
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    last = flat.size - 1 - first_from_end
    y[flat[last]] = x.reshape(-1)[last]
    return y.reshape(output_shape)

"""The judge's one equality of values: element by element, the same bits (so -0.0 is not 0.0),
except that any NaN equals any NaN (a runtime's NaN payload is its own). Arrays of one element
type and shape; the judge compares types and shapes before it compares values."""

from __future__ import annotations

import numpy as np


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return a == b
    unsigned = f"u{a.dtype.itemsize}"
    equal = np.ascontiguousarray(a).view(unsigned) == np.ascontiguousarray(b).view(unsigned)
    return equal | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))

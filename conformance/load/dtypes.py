"""Element types by the names that case files, test ids and reports use."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from onnx import TensorProto


@dataclass(frozen=True)
class DType:
    name: str
    numpy: np.dtype
    onnx: int

    @property
    def is_integer(self) -> bool:
        return np.issubdtype(self.numpy, np.integer)

    def cast(self, values) -> np.ndarray:
        """Literal (nested lists) or generated (arrays) values as this type. Integers are taken
        exactly, never through float64 (2**53 + 1 stays itself), and must be integral and in
        range; a finite literal that overflows a floating type is refused too."""
        if self.is_integer:
            return self._integers(values)
        try:
            array = np.asarray(values, dtype=np.float64)
        except OverflowError:
            raise ValueError(f"{self.name} values must lie within the type's range (a literal overflows float64)") from None
        with np.errstate(over="ignore"):
            result = array.astype(self.numpy)
        overflowed = np.isfinite(array) & ~np.isfinite(result.astype(np.float64))
        if np.any(overflowed):
            biggest = float(ml_dtypes.finfo(self.numpy).max)  # numpy's finfo does not know bfloat16
            raise ValueError(f"{self.name} values must lie within ±{biggest:g}: "
                             f"{array[overflowed].flat[0]:g} overflows to infinity (write .inf for an infinity)")
        return result

    def _integers(self, values) -> np.ndarray:
        info = np.iinfo(self.numpy)
        # an integer array, or Python ints that numpy holds exactly: checked without a loop
        held = values if isinstance(values, np.ndarray) else _as_integer_array(values)
        if held is not None and held.dtype.kind in "iu":
            if not held.size or (int(held.min()) >= info.min and int(held.max()) <= info.max):
                return held.astype(self.numpy)
            if held is values:
                raise ValueError(f"{self.name} values must lie in [{info.min}, {info.max}]")
        elements = np.array(values, dtype=object)  # Python ints stay exact
        exact = []
        for value in elements.flat:
            if isinstance(value, (float, np.floating)):
                if not np.isfinite(value) or value != np.round(value):
                    raise ValueError(f"{self.name} values must be integers")
                value = int(value)
            exact.append(int(value))
        if any(v < info.min or v > info.max for v in exact):
            outside = next(v for v in exact if v < info.min or v > info.max)
            raise ValueError(f"{self.name} values must lie in [{info.min}, {info.max}], not {outside}")
        return np.array(exact, dtype=self.numpy).reshape(elements.shape)


def _as_integer_array(values) -> np.ndarray | None:
    """``values`` as an integer array where numpy holds every one exactly (no float, bool or
    object among them), else None."""
    try:
        array = np.array(values)
    except (ValueError, TypeError, OverflowError):  # ragged, or beyond every integer type
        return None
    return array if array.dtype.kind in "iu" else None


DTYPES = {
    d.name: d
    for d in (
        DType("float16", np.dtype(np.float16), TensorProto.FLOAT16),
        DType("float32", np.dtype(np.float32), TensorProto.FLOAT),
        DType("float64", np.dtype(np.float64), TensorProto.DOUBLE),
        DType("bfloat16", np.dtype(ml_dtypes.bfloat16), TensorProto.BFLOAT16),
        DType("int8", np.dtype(np.int8), TensorProto.INT8),
        DType("uint8", np.dtype(np.uint8), TensorProto.UINT8),
        DType("int32", np.dtype(np.int32), TensorProto.INT32),
        DType("int64", np.dtype(np.int64), TensorProto.INT64),
    )
}


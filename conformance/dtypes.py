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
        """Literal or generated values as this type; integers must be integral and in range."""
        array = np.asarray(values, dtype=np.float64)
        if self.is_integer:
            info = np.iinfo(self.numpy)
            if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
                raise ValueError(f"{self.name} values must be integers")
            if array.size and (array.min() < info.min or array.max() > info.max):
                raise ValueError(f"{self.name} values must lie in [{info.min}, {info.max}]")
        return array.astype(self.numpy)


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


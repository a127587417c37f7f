"""onnx2torch (``pip install 'maxpool-conformance[torch]'``): the model converted to a
``torch.nn.Module`` with ``onnx2torch.convert`` and run on the CPU.

onnx2torch has a converter per (domain, operator, version); where it has none, ``convert`` raises
NotImplementedError ("Converter is not implemented (OperationDescription(domain='com.ms.internal.nhwc',
operation_type='MaxPool', version=11))"), and the item is `unsupported`. Element types torch has no
tensor type for (bfloat16 arrays from ml_dtypes) are `unsupported` too. The version is onnx2torch's,
with torch's in the details.
"""

from __future__ import annotations

from importlib import metadata
from typing import Sequence

import numpy as np
import onnx

from .base import Capability, Unsupported, declared, import_extra

# What onnx2torch declares beyond NotImplementedError; any other refusal of a valid model is a bug.
CAPABILITIES = (
    Capability(r"can't convert np.ndarray of type", "torch.from_numpy: an element type torch has no tensor type for",
               "can't convert np.ndarray of type numpy.void. The only supported types are: float64, float32, "
               "float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."),
)


class Onnx2TorchBackend:
    name = "onnx2torch"

    def __init__(self):
        (torch,) = import_extra("onnx2torch", "torch", "torch")
        try:
            (onnx2torch,) = import_extra("onnx2torch", "torch", "onnx2torch")
            convert = onnx2torch.convert
        except RuntimeError as e:  # "operator torchvision::nms does not exist": torchvision built for another torch
            raise ImportError(f"onnx2torch imports torchvision, which does not load beside torch {torch.__version__} "
                              f"(a torchvision built for another torch, e.g. CUDA's beside a CPU torch): {e}") from e
        self.torch, self.convert = torch, convert
        self.version = metadata.version("onnx2torch")

    def details(self) -> dict[str, str]:
        return {"torch": self.torch.__version__, "device": "cpu", "pipeline": "onnx2torch.convert(model)(*inputs)"}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        try:
            module = self.convert(model)
        except NotImplementedError as e:  # a (domain, operator, version) it has no converter for
            raise Unsupported(str(e) or type(e).__name__) from e
        try:
            tensors = [self.torch.from_numpy(np.ascontiguousarray(inputs[vi.name])) for vi in model.graph.input]
        except TypeError as e:
            if declared(str(e), CAPABILITIES):
                raise Unsupported(str(e)) from e
            raise
        with self.torch.no_grad():
            outputs = module(*tensors)
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        return [output.numpy() for output in outputs]

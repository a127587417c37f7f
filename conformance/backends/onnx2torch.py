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

from .base import Unsupported, import_extra


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
            tensors = [self.torch.from_numpy(np.ascontiguousarray(inputs[vi.name])) for vi in model.graph.input]
        except (NotImplementedError, TypeError) as e:  # TypeError: a numpy element type torch cannot hold
            raise Unsupported(str(e) or type(e).__name__) from e
        with self.torch.no_grad():
            outputs = module(*tensors)
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        return [output.numpy() for output in outputs]

"""OpenVINO (``pip install openvino``), on a device of its own (``openvino[device=GPU]``; CPU by
default).

ai.onnx items go through OpenVINO's ONNX frontend (``Core.read_model``). OpenVINO's own
MaxPool (domain ``org.openvinotoolkit``, versions 1, 8 and 14) is built natively with
``openvino.opset1.max_pool`` / ``opset8.max_pool`` / ``opset14.max_pool`` from the node's
attributes (a release without opset14, before 2024.0, cannot run MaxPool-14). A model
the frontend has no conversion for, or an operation the device cannot run, is ``unsupported``
with OpenVINO's message; any other refusal stays an error. bfloat16 tensors cross the Python
API as float16 arrays holding bfloat16 bits: they are reinterpreted, never converted.
"""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

from ..semantics import OPENVINO_DOMAIN
from .base import Capability, Unsupported, declared, import_extra

# Where OpenVINO says it cannot, rather than should not, run a model (a line of its message); any
# other refusal of a valid model is a bug.
CAPABILITIES = (
    Capability(r"No conversion rule", "src/frontends/onnx/frontend/src/core/graph.cpp: an operator the ONNX frontend "
               "has no translator for", "No conversion rule found for operations: MaxUnpool-22"),
    Capability(r"does not support the following ONNX operations", "src/frontends/onnx/frontend/src/core/graph.cpp, "
               "before 2023", "OpenVINO does not support the following ONNX operations: com.ms.internal.nhwc.MaxPool"),
    Capability(r"Unsupported operation of type", "src/frontends/onnx/frontend/src/core/graph.cpp",
               "Unsupported operation of type: MaxPool name: Indices"),
    Capability(r"Expected a 3D, 4D or 5D tensor for the input", "src/core/shape_inference/include/"
               "pooling_shape_inference_util.hpp: OpenVINO's pooling has 1 to 3 spatial axes",
               "Expected a 3D, 4D or 5D tensor for the input. Got: [1,1,2,2,2,2]"),
)
# Lines of an OpenVINO message that say where, not why.
WHERE = ("Exception from", "Check '", "While validating", "FrontEnd API failed", "Model wasn't", "Summary")
# ... and lines that announce the reason on the next line ("MaxPool-1 with a message:").
HEADING = ("with a message:", "Failed operations detailed log:")
ELEMENT_TYPES = {onnx.TensorProto.FLOAT16: "f16", onnx.TensorProto.FLOAT: "f32", onnx.TensorProto.DOUBLE: "f64",
                 onnx.TensorProto.BFLOAT16: "bf16", onnx.TensorProto.INT8: "i8", onnx.TensorProto.UINT8: "u8",
                 onnx.TensorProto.INT32: "i32", onnx.TensorProto.INT64: "i64"}


def opset_of(ov: Any, name: str) -> ModuleType | None:
    """openvino's ``name`` (opset8, say): an attribute of its package where the package imported it;
    else its submodule, which a release may leave unimported (the top-level package of 2023.1 to
    2024.6 has Core but not its opsets), at the top or under ``openvino.runtime`` (2023.0). None
    where the release has no such opset (opset14 before 2024.0)."""
    found = getattr(ov, name, None)
    if found is not None:
        return found
    for module in dict.fromkeys((f"{ov.__name__}.{name}", f"openvino.{name}", f"openvino.runtime.{name}")):
        try:
            return importlib.import_module(module)
        except ImportError:
            continue
    return None


class OpenVinoBackend:
    name = "openvino"
    title = "OpenVINO"

    def __init__(self, device: str = "CPU"):
        (openvino,) = import_extra("openvino", "openvino", "openvino")
        # Core, Type, Tensor, Model and the opsets: at the top since 2023.1, in openvino.runtime before
        self.ov = openvino if hasattr(openvino, "Core") else import_extra("openvino", "openvino", "openvino.runtime")[0]
        self.core = self.ov.Core()
        if device not in self.core.available_devices:
            raise ValueError(f"device {device!r} is not among {', '.join(self.core.available_devices)}")
        self.device = device
        self.build = getattr(openvino, "__version__", None) or self.ov.get_version()  # 2023.0 has no __version__
        self.version = self.build.split("-")[0]

    def details(self) -> dict[str, str]:
        return {"device": self.device, "build": self.build,
                "ai.onnx": "ONNX frontend (Core.read_model)", OPENVINO_DOMAIN: "opset1/opset8/opset14 max_pool"}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        try:
            if [n.domain for n in model.graph.node] == [OPENVINO_DOMAIN]:
                built = self._native(model, inputs)
            else:
                built = self._through_the_frontend(model)
                # the shapes the inputs have, where the model leaves them open (CPU needs a rank)
                built.reshape({index: list(inputs[vi.name].shape) for index, vi in enumerate(model.graph.input)})
            compiled = self.core.compile_model(built, self.device)
        except Exception as e:
            # OpenVINO's messages start with where they were thrown: lead with why.
            lines = [line.strip(" |-") for line in str(e).splitlines() if line.strip(" |-")]
            cannot = next((line for line in lines if declared(line, CAPABILITIES)), None)
            if cannot:
                raise Unsupported("\n".join([cannot] + lines)) from e
            why = next((line for line in lines if not line.startswith(WHERE) and not line.endswith(HEADING)), None)
            if why is None:
                raise
            raise type(e)("\n".join([why] + lines)) from e
        request = compiled.create_infer_request()
        request.infer({index: self._tensor(inputs[vi.name]) for index, vi in enumerate(model.graph.input)})
        return [self._array(request.get_output_tensor(index)) for index in range(len(compiled.outputs))]

    def _through_the_frontend(self, model: onnx.ModelProto):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "model.onnx")
            onnx.save(model, path)
            return self.core.read_model(path)

    def _native(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]):
        """OpenVINO's MaxPool-1, -8 or -14 from the attributes of the node that names it, on an
        input of the shape it is given."""
        (node,) = model.graph.node
        (graph_input,) = model.graph.input
        version = next(o.version for o in model.opset_import if o.domain == OPENVINO_DOMAIN)
        a = {attr.name: helper.get_attribute_value(attr) for attr in node.attribute}
        a = {k: v.decode() if isinstance(v, bytes) else v for k, v in a.items()}
        known = {"kernel", "strides", "pads_begin", "pads_end", "rounding_type", "auto_pad"}
        if version >= 8:
            known |= {"dilations", "index_element_type", "axis"}
        unknown = sorted(set(a) - known)
        if unknown:
            raise ValueError(f"openvino MaxPool-{version} has no attribute {', '.join(unknown)}")
        element_type = ELEMENT_TYPES[graph_input.type.tensor_type.elem_type]
        opset_name = "opset14" if version >= 14 else "opset8" if version >= 8 else "opset1"
        opset = opset_of(self.ov, opset_name)
        if opset is None:
            raise Unsupported(f"openvino {self.build} has no {opset_name} (MaxPool-{version})")
        data = opset.parameter(list(inputs[graph_input.name].shape), getattr(self.ov.Type, element_type),
                               name=graph_input.name)
        common = dict(strides=a.get("strides"), pads_begin=a.get("pads_begin"), pads_end=a.get("pads_end"),
                      kernel_shape=a.get("kernel"), rounding_type=a.get("rounding_type", "floor"),
                      auto_pad=a.get("auto_pad", "explicit"), name=node.name or "MaxPool")
        if version >= 8:
            pool = opset.max_pool(data, dilations=a.get("dilations", [1] * len(a.get("kernel", []))),
                                  index_element_type=a.get("index_element_type", "i64"), axis=a.get("axis", 0),
                                  **common)
        else:
            pool = opset.max_pool(data, **common)
        if len(node.output) > pool.get_output_size():
            raise ValueError(f"openvino MaxPool-1 has {pool.get_output_size()} output, the node asks for {len(node.output)}")
        return self.ov.Model([pool.output(i) for i in range(len(node.output))], [data], "max_pool")

    def _tensor(self, array: np.ndarray):
        if array.dtype == ml_dtypes.bfloat16:
            tensor = self.ov.Tensor(self.ov.Type.bf16, array.shape)
            tensor.data.view(np.uint16)[...] = array.view(np.uint16)
            return tensor
        # The array itself, not an ov.Tensor over it: from 2023.1 to 2024.0, infer() read garbage
        # from a Tensor made of a numpy array (fixed in 2024.1; found by the release sweep)
        return np.ascontiguousarray(array)

    def _array(self, tensor) -> np.ndarray:
        data = tensor.data.copy()
        if tensor.element_type == self.ov.Type.bf16:  # float16 numbers holding bfloat16 bits
            return data.view(np.uint16).view(ml_dtypes.bfloat16)
        return data

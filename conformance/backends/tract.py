"""tract, Sonos' Rust inference engine, through its Python package (``pip install tract``).

tract loads ONNX only from a file. An operator it does not implement ("Unimplemented(MaxUnpool)")
or an element type it has no datum type for (bfloat16) makes the item `unsupported`; any other
refusal stays an error. tract aborts its process on some invalid models: run it isolated.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np
import onnx

from .base import Capability, Unsupported, declared, import_extra

# What tract declares it cannot run; any other refusal of a valid model is a bug.
CAPABILITIES = (
    Capability(r"Unimplemented\(", "onnx/src/model.rs, an operator with no translation to tract's ops",
               'Translating node #2 "output" Unimplemented(MaxUnpool) ToTypedTranslator'),
    Capability(r"elem_type: Bfloat16", "onnx/src/tensor.rs, an element type with no datum type",
               "translating to fact: Tensor { elem_type: Bfloat16, shape: Some(TensorShapeProto { dim: [...] }) }"),
)
DATUM_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "uint8": "u8", "int16": "i16",
               "uint16": "u16", "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64", "bool": "bool"}


class TractBackend:
    name = "tract"

    def __init__(self):
        (tract,) = import_extra("tract", "tract", "tract")
        self.tract = tract
        self.version = tract.version()

    def details(self) -> dict[str, str]:
        return {"pipeline": "onnx().load(file).into_model().into_runnable()"}

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory, "model.onnx")
            onnx.save(model, path)
            arrays = [inputs[vi.name] for vi in model.graph.input]
            try:
                loaded = self.tract.onnx().load(path)
                for index, array in enumerate(arrays):
                    if array.dtype.name in DATUM_TYPES:  # the facts of the actual inputs, as `tract` takes them
                        loaded.set_input_fact(index, ",".join([*map(str, array.shape), DATUM_TYPES[array.dtype.name]]))
                runnable = loaded.into_model().into_runnable()
            except self.tract.TractError as e:
                if declared(str(e), CAPABILITIES):
                    raise Unsupported(str(e)) from e
                raise
        return [output.to_numpy() for output in runnable.run(arrays)]

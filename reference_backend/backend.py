"""The reference backend as an ``onnx.backend.base.Backend``: validates, then evaluates the graph.

Besides ai.onnx it runs OpenVINO's MaxPool-1 and -8 (``org.openvinotoolkit``, OpenVINO's attributes
and rounding) and ONNX Runtime's NHWC max poolings (``com.ms.internal.nhwc`` MaxPool,
``com.microsoft`` NhwcMaxPool) by moving the channels around the one N-d kernel: X comes
(N, spatial..., C) and Y goes back so; Indices stay as ai.onnx gives them, (N, C, spatial...) with
positions in the channels-first X, which is what ONNX Runtime's layout transformer relies on
(it transposes output 0 only) and its CUDA kernel writes (``nhwc-indices`` in the registry).
"""

from __future__ import annotations

from typing import Any, Sequence

import ml_dtypes
import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep

from conformance.semantics import (AUTO_PADS, DEFAULT, OPENVINO_AUTO_PADS, Axis, GeometryError, Readings, nhwc_indices,
                                   node_axes, openvino_reduced, openvino_rounding_types, unpool_shape)

from .maxpool import max_pool, without_element
from .maxunpool import max_unpool
from .signatures import CHANNELS_LAST, ELEMENT_TYPES, OPENVINO, SIGNATURES, Signature, resolve

# What ONNX Runtime's XNNPACK fusion writes into `activation`: both clamp Y to activation_params.
ACTIVATIONS = ("Relu", "Clip")


class InvalidModel(ValueError):
    """The model breaks a rule of the operator's document; a conforming runtime must refuse it."""


class ReferenceBackend(Backend):
    """Numpy reference for ai.onnx MaxPool (1, 8, 10, 11, 12, 22) and MaxUnpool (9, 11, 22), ONNX
    Runtime's NHWC MaxPools (com.ms.internal.nhwc 1-12, com.microsoft NhwcMaxPool 1) and
    OpenVINO's MaxPool (org.openvinotoolkit 1, 8).

    It follows ``readings`` where the documents are open (the defaults; ``configured`` gives a
    class that follows others). Its steps are public class-method hooks, so that a variant (the
    suite's mutation self-test) is a subclass that overrides one of them.
    """

    readings: Readings = DEFAULT

    @classmethod
    def configured(cls, readings: str = "") -> type["ReferenceBackend"]:
        """This backend following other readings: ``question:reading;...`` (``reference[readings=...]``)."""
        chosen = Readings.parse(readings)
        return type(f"{cls.__name__}[{chosen}]", (cls,), {"readings": chosen}) if chosen != cls.readings else cls

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return device == "CPU" and all((node.domain or "ai.onnx", node.op_type) in SIGNATURES for node in model.graph.node)

    @classmethod
    def prepare(cls, model: onnx.ModelProto | bytes, device: str = "CPU", **kwargs: Any) -> "ReferenceRep":
        if isinstance(model, bytes):
            model = onnx.load_from_string(model)
        if not cls.supports_device(device):
            raise NotImplementedError(f"the reference backend runs on CPU only, not {device}")
        return ReferenceRep(model, cls)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs: Any):
        return cls.prepare(model, device).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

    # The hooks, in the order a node meets them.
    @classmethod
    def attributes(cls, domain: str, attributes: dict[str, Any]) -> dict[str, Any]:
        """The node's attribute values as it reads them."""
        return attributes

    @classmethod
    def channels_last(cls, domain: str, op_type: str) -> bool:
        return (domain, op_type) in CHANNELS_LAST

    @classmethod
    def validate(cls, node: "_Node", proto: onnx.NodeProto) -> None:
        node.validate(proto)

    @classmethod
    def check_type(cls, node: "_Node", x: np.ndarray) -> None:
        if ELEMENT_TYPES.get(x.dtype) not in node.signature.types:
            raise InvalidModel(f"{node.op} does not accept element type {x.dtype}")

    @classmethod
    def axes(cls, domain: str, attributes: dict[str, Any], spatial_shape: tuple[int, ...]) -> tuple[Axis, ...]:
        return node_axes(domain, attributes, spatial_shape, cls.readings)

    @classmethod
    def pool(cls, x: np.ndarray, axes: tuple[Axis, ...], storage_order: int = 0,
             with_indices: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        return max_pool(x, axes, storage_order, with_indices, cls.readings)

    @classmethod
    def clamp(cls, y: np.ndarray, low: float, high: float) -> np.ndarray:
        return _clamp(y, low, high, cls.readings)

    @classmethod
    def unpool_shape(cls, x_shape: tuple[int, ...], attributes: dict[str, Any],
                     output_shape: np.ndarray | None) -> tuple[int, ...]:
        """MaxUnpool's output shape: output_shape if given, else the default."""
        if output_shape is None:
            return unpool_shape(x_shape, attributes["kernel_shape"], attributes.get("strides"), attributes.get("pads"),
                                cls.readings)
        return tuple(int(d) for d in output_shape.reshape(-1))

    @classmethod
    def unpool(cls, x: np.ndarray, indices: np.ndarray, shape: tuple[int, ...],
               default_shape: tuple[int, ...] | None = None) -> np.ndarray:
        return max_unpool(x, indices, shape, default_shape, cls.readings)


class ReferenceRep(BackendRep):
    def __init__(self, model: onnx.ModelProto, backend: type[ReferenceBackend] = ReferenceBackend):
        opsets = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
        graph = model.graph
        initialized = {init.name for init in graph.initializer}
        self.input_types = {
            vi.name: vi.type.tensor_type.elem_type for vi in graph.input if vi.name not in initialized
        }
        self.constants = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
        self.input_names = [vi.name for vi in graph.input if vi.name not in initialized]
        self.output_names = [vi.name for vi in graph.output]
        self.nodes: list[Any] = [_compile(node, opsets, backend) for node in graph.node]  # _Node subclasses: callables

    def run(self, inputs: Sequence[np.ndarray] | dict[str, np.ndarray], **kwargs: Any) -> list[Any]:  # type: ignore[override]  # onnx's stub says tuple
        if not isinstance(inputs, dict):
            inputs = dict(zip(self.input_names, inputs))
        values: dict[str, np.ndarray | None] = {"": None, **self.constants}
        for name in self.input_names:
            array = np.asarray(inputs[name])
            declared = self.input_types[name]
            if ELEMENT_TYPES.get(array.dtype) != declared:
                raise ValueError(
                    f"input {name} is {array.dtype} but the graph declares "
                    f"{onnx.TensorProto.DataType.Name(declared).lower()}"
                )
            values[name] = array
        for node in self.nodes:
            results = node([values[name] for name in node.inputs])
            values.update(zip(node.outputs, results))
        return [values[name] for name in self.output_names]


class _Node:
    def __init__(self, proto: onnx.NodeProto, version: int, signature: Signature, backend: type[ReferenceBackend]):
        domain = proto.domain if proto.domain not in ("", "ai.onnx") else ""
        self.domain = proto.domain or "ai.onnx"
        self.op = f"{domain + '.' if domain else ''}{proto.op_type}-{version}"
        self.version = version
        self.backend = backend
        self.readings = backend.readings
        self.channels_last = backend.channels_last(self.domain, proto.op_type)
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.signature = signature
        read = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self.attrs = backend.attributes(self.domain, {k: v.decode() if isinstance(v, bytes) else v for k, v in read.items()})

    def validate(self, proto: onnx.NodeProto) -> None:
        _validate(self, proto)

    def axes(self, x: np.ndarray) -> tuple[Axis, ...]:
        try:
            return self.backend.axes(self.domain, self.attrs, x.shape[2:])
        except GeometryError as e:
            raise ValueError(f"{self.op}: {e}") from e


class _MaxPool(_Node):
    def __call__(self, inputs: list[Any]) -> list[Any]:
        (x,) = inputs
        self.backend.check_type(self, x)
        if self.channels_last:
            if x.ndim < 3:
                raise ValueError(f"{self.op}: X has {x.ndim} axes; it needs N, spatial axes and C")
            x = np.ascontiguousarray(np.moveaxis(x, -1, 1))
        a = self.attrs
        y, indices = self.backend.pool(x, self.axes(x), a.get("storage_order", 0), with_indices=len(self.outputs) > 1)
        if "activation" in a and _activation_is_valid(a):
            y = self.backend.clamp(y, *a["activation_params"])
        if self.channels_last:
            y = np.ascontiguousarray(np.moveaxis(y, 1, -1))
            if indices is not None:
                indices = nhwc_indices(indices, x.shape, self.readings)
        return [y, indices][: len(self.outputs)]


def _activation_is_valid(attrs: dict) -> bool:
    bounds = list(attrs.get("activation_params", ()))
    return attrs["activation"] in ACTIVATIONS and len(bounds) == 2 and bounds[0] <= bounds[1]


def _clamp(y: np.ndarray, low: float, high: float, readings: Readings = DEFAULT) -> np.ndarray:
    """Y clamped to [low, high], the bounds rounded to Y's type; NaN stays NaN, -0.0 stays -0.0."""
    if np.issubdtype(y.dtype, np.integer):  # an 8-bit Y holds the integers inside the bounds
        if readings["nhwc-activation-8-bit"] == "ignored":
            return y
        info = np.iinfo(y.dtype)
        low_value = np.array(min(max(np.ceil(low), info.min), info.max), y.dtype)
        high_value = np.array(min(max(np.floor(high), info.min), info.max), y.dtype)
    else:
        low_value, high_value = np.array(low).astype(y.dtype), np.array(high).astype(y.dtype)
    wide = y.astype(np.float64)
    return np.where(wide < low, low_value, np.where(wide > high, high_value, y)).astype(y.dtype)


class _MaxUnpool(_Node):
    def __call__(self, inputs: list[Any]) -> list[Any]:
        x, indices, output_shape = (inputs + [None])[:3]
        self.backend.check_type(self, x)
        if indices.dtype != np.int64:
            raise InvalidModel(f"{self.op}: I must be int64, not {indices.dtype}")
        if output_shape is not None and output_shape.dtype != np.int64:
            raise InvalidModel(f"{self.op}: output_shape must be int64, not {output_shape.dtype}")
        try:
            shape = self.backend.unpool_shape(x.shape, self.attrs, output_shape)
        except GeometryError as e:
            raise ValueError(f"{self.op}: {e}") from e
        try:  # the shape without output_shape, which some readings compare with
            default = self.backend.unpool_shape(x.shape, self.attrs, None)
        except GeometryError:
            default = shape
        if len(shape) != x.ndim or min(shape, default=0) < 0:
            raise ValueError(f"{self.op}: output_shape {shape} is not a shape of rank {x.ndim}")
        return [self.backend.unpool(x, indices, shape, default)]


class _OpenVinoMaxPool(_Node):
    """OpenVINO's MaxPool: its geometry (openvino_axes), Indices reduced to the axes from `axis`
    on and of the type index_element_type names."""

    def __call__(self, inputs: list[Any]) -> list[Any]:
        (x,) = inputs
        self.backend.check_type(self, x)
        a = self.attrs
        if x.ndim not in (3, 4, 5):
            raise InvalidModel(f"{self.op}: the input must be 3D, 4D or 5D, not {x.ndim}D")
        axis = a.get("axis", 0)
        if not -x.ndim <= axis < x.ndim:
            raise InvalidModel(f"{self.op}: axis {axis} is outside [-{x.ndim}, {x.ndim - 1}]")
        axes = self.axes(x)
        y, indices = self.backend.pool(x, axes, with_indices=len(self.outputs) > 1)
        if self.readings["openvino-window-without-element"] == "lowest-finite-plane-start":
            y, indices = _lowest_finite_at_plane_start(x, axes, y, indices)
        if indices is None:
            return [y]
        indices = openvino_reduced(indices, x.shape, axis)
        return [y, indices.astype(_INDEX_TYPES[a.get("index_element_type", "i64")])]

    def validate(self, proto: onnx.NodeProto) -> None:
        _check_signature(self, proto)
        attrs, op = self.attrs, self.op
        for name in ("kernel", "strides", "pads_begin", "pads_end"):
            if name not in attrs:
                raise InvalidModel(f"{op}: {name} is required")
        rank = len(attrs["kernel"])
        for name in ("strides", "pads_begin", "pads_end", "dilations"):
            if name in attrs and len(attrs[name]) != rank:
                raise InvalidModel(f"{op}: {name} has {len(attrs[name])} values, kernel {rank}")
        if any(v < 1 for v in attrs["kernel"]):
            raise InvalidModel(f"{op}: kernel values start from 1, got {list(attrs['kernel'])}")
        # The documents allow strides and dilations of 0 (openvino-zero-stride-or-dilation); no
        # window can then move or spread, and by default the reference refuses them.
        lowest = 0 if self.readings["openvino-zero-stride-or-dilation"] == "allowed" else 1
        for name in ("strides", "dilations"):
            if any(v < lowest for v in attrs.get(name, ())):
                raise InvalidModel(f"{op}: {name} of 0 or less, {list(attrs[name])}, move no window")
        if any(v < 0 for name in ("pads_begin", "pads_end") for v in attrs[name]):
            raise InvalidModel(f"{op}: pads start from 0")
        for name, allowed in (("auto_pad", OPENVINO_AUTO_PADS), ("rounding_type", openvino_rounding_types(self.version)),
                              ("index_element_type", tuple(_INDEX_TYPES))):
            if name in attrs and attrs[name] not in allowed:
                raise InvalidModel(f"{op}: {name} {attrs[name]!r} is not one of {', '.join(allowed)}")


def _lowest_finite_at_plane_start(x: np.ndarray, axes: tuple[Axis, ...], y: np.ndarray,
                                  indices: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """``openvino-window-without-element``'s other reading: such a window yields the type's lowest
    finite value and the index of its plane's first element."""
    empty = np.broadcast_to(without_element(axes), y.shape)
    if not empty.any():
        return y, indices
    lowest = np.iinfo(y.dtype).min if np.issubdtype(y.dtype, np.integer) else ml_dtypes.finfo(y.dtype).min
    y = np.where(empty, np.array(lowest, y.dtype), y)
    if indices is not None:
        plane = int(np.prod(x.shape[2:], dtype=np.int64))
        position = np.indices(y.shape)
        indices = np.where(empty, (position[0] * x.shape[1] + position[1]) * plane, indices)
    return y, indices


_INDEX_TYPES = {"i64": np.int64, "i32": np.int32}
_KINDS = {"MaxPool": _MaxPool, "NhwcMaxPool": _MaxPool, "MaxUnpool": _MaxUnpool}


def _compile(proto: onnx.NodeProto, opsets: dict[str, int], backend: type[ReferenceBackend]) -> _Node:
    domain = proto.domain or "ai.onnx"
    key = (domain, proto.op_type)
    if key not in SIGNATURES:
        raise NotImplementedError(f"the reference backend does not implement {domain}:{proto.op_type}")
    if domain not in opsets:
        raise InvalidModel(f"the model imports no opset for {domain}")
    version = resolve(domain, proto.op_type, opsets[domain])
    if version is None:
        raise InvalidModel(f"{proto.op_type} does not exist at {domain} opset {opsets[domain]}")
    signature = SIGNATURES[key][version]
    kind = _OpenVinoMaxPool if key == OPENVINO else _KINDS[proto.op_type]
    node = kind(proto, version, signature, backend)
    backend.validate(node, proto)
    return node


def _check_signature(node: _Node, proto: onnx.NodeProto) -> None:
    """The node's inputs, outputs and attributes against its version's signature."""
    sig, op = node.signature, node.op
    n_in = len(proto.input)
    if not sig.inputs[0] <= n_in <= sig.inputs[1] or any(not name for name in proto.input[: sig.inputs[0]]):
        raise InvalidModel(f"{op} takes {sig.inputs[0]} to {sig.inputs[1]} inputs, got {n_in}")
    if not sig.outputs[0] <= len(proto.output) <= sig.outputs[1]:
        raise InvalidModel(f"{op} has {sig.outputs[0]} to {sig.outputs[1]} outputs, got {len(proto.output)}")
    for a in proto.attribute:
        if a.name not in sig.attributes:
            raise InvalidModel(f"{op} has no attribute {a.name!r}")
        if a.type != sig.attributes[a.name]:
            raise InvalidModel(f"{op}: attribute {a.name!r} has the wrong type")


def _validate(node: _Node, proto: onnx.NodeProto) -> None:
    _check_signature(node, proto)
    attrs, op = node.attrs, node.op
    kernel = attrs.get("kernel_shape")
    if not kernel:
        raise InvalidModel(f"{op}: kernel_shape is required")
    rank = len(kernel)
    expected_lengths = {"kernel_shape": rank, "strides": rank, "dilations": rank, "pads": 2 * rank}
    for name, length in expected_lengths.items():
        if name in attrs and len(attrs[name]) != length:
            raise InvalidModel(f"{op}: {name} has {len(attrs[name])} values, expected {length}")
    for name in ("kernel_shape", "strides", "dilations"):
        if any(v < 1 for v in attrs.get(name, ())):
            raise InvalidModel(f"{op}: {name} values must be positive, got {list(attrs[name])}")
    if any(v < 0 for v in attrs.get("pads", ())):
        raise InvalidModel(f"{op}: pads must be non-negative, got {list(attrs['pads'])}")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    readings = node.readings
    if auto_pad not in AUTO_PADS and not (auto_pad == "" and readings["auto-pad-empty-string"] == "notset"):
        raise InvalidModel(f"{op}: auto_pad {auto_pad!r} is not NOTSET, SAME_UPPER, SAME_LOWER or VALID")
    if auto_pad not in ("NOTSET", "") and "pads" in attrs and readings["pads-with-auto-pad"] == "rejected":
        raise InvalidModel(f"{op}: pads cannot be used together with auto_pad={auto_pad}")
    for name in ("ceil_mode", "storage_order"):
        if attrs.get(name, 0) not in (0, 1):
            raise InvalidModel(f"{op}: {name} must be 0 or 1, got {attrs[name]}")
    if "activation" in attrs and readings["nhwc-activation"] == "clamp":
        activation = attrs["activation"]
        if activation not in ACTIVATIONS:
            raise InvalidModel(f"{op}: activation {activation!r} is not {' or '.join(ACTIVATIONS)}")
        bounds = list(attrs.get("activation_params", ()))
        if len(bounds) != 2 or not bounds[0] <= bounds[1]:
            raise InvalidModel(f"{op}: activation {activation} needs activation_params [min, max], min <= max; got {bounds}")
    elif "activation_params" in attrs and "activation" not in attrs and readings["nhwc-activation"] == "clamp":
        raise InvalidModel(f"{op}: activation_params without an activation")

"""Backends with bugs no defect model of the library describes, as held-out runtimes showed them:
each rewrites the MaxPool node it is given the way the runtime misreads it, and answers as the
reference answers the rewritten node (so its output shapes follow the misreading too). The
explanation by experiment must name each by its deciding conditions (tests/meta/test_explain.py)."""

from __future__ import annotations

import ctypes

import onnx
from onnx import helper

from reference_backend import ReferenceBackend

from .faulty_backends import Faulty


def _attributes(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _with(model: onnx.ModelProto, **changes) -> onnx.ModelProto:
    """``model`` with its node's attributes changed (a value of None removes one)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    node = model.graph.node[-1]
    kept = {**_attributes(node), **changes}
    del node.attribute[:]
    node.attribute.extend(helper.make_attribute(k, v) for k, v in kept.items() if v is not None)
    return model


class Misreads(Faulty):
    """Runs the reference on the model as ``misread`` rewrites it (the ai.onnx MaxPool alone)."""

    def misread(self, model: onnx.ModelProto, spatial: list[int]) -> onnx.ModelProto:
        raise NotImplementedError

    def misread_node(self, model: onnx.ModelProto, inputs) -> onnx.ModelProto:
        """The model as this backend reads it: an ai.onnx MaxPool misread, any other as it is."""
        node = model.graph.node[-1]
        if node.op_type == "MaxPool" and node.domain in ("", "ai.onnx") and len(model.graph.node) == 1:
            return self.misread(model, list(inputs[model.graph.input[0].name].shape[2:]))
        return model

    def run(self, model, inputs):
        return ReferenceBackend.run_model(self.misread_node(model, inputs), [inputs[i.name] for i in model.graph.input])


class DilatesTheFirstAxisOnly(Misreads):
    """Every spatial axis but the first is pooled without its dilation."""

    def misread(self, model, spatial):
        rank = len(spatial)
        dilations = _attributes(model.graph.node[-1]).get("dilations")
        return _with(model, dilations=[dilations[0]] + [1] * (rank - 1)) if dilations else model


class PadsBothEndsWithTheEndPadIn1D(Misreads):
    """A 1-D pool applies its end pad at both ends (its begin pad is lost)."""

    def misread(self, model, spatial):
        rank = len(spatial)
        pads = _attributes(model.graph.node[-1]).get("pads")
        return _with(model, pads=[pads[1], pads[1]]) if rank == 1 and pads else model


class SkipsAnAxisWhoseOutputIsItsInputIn3D(Misreads):
    """A 3-D pool leaves alone an axis whose output extent equals its input's (it takes it for a
    copy, whatever its kernel and pads)."""

    def misread(self, model, spatial):
        a = _attributes(model.graph.node[-1])
        if len(spatial) != 3 or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET") or a.get("ceil_mode"):
            return model
        kernel, strides = list(a["kernel_shape"]), list(a.get("strides", [1] * 3))
        dilations, pads = list(a.get("dilations", [1] * 3)), list(a.get("pads", [0] * 6))
        for axis, size in enumerate(spatial):
            span = (kernel[axis] - 1) * dilations[axis] + 1
            if size and (size + pads[axis] + pads[3 + axis] - span) // strides[axis] + 1 == size:
                kernel[axis], strides[axis], dilations[axis], pads[axis], pads[3 + axis] = 1, 1, 1, 0, 0
        # a skipped axis takes only defaults (1, 0): an attribute the node leaves out stays out
        changed = {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "pads": pads}
        return _with(model, **{k: v for k, v in changed.items() if k in a or k == "kernel_shape"})


class CrashesWhereStorageOrderIsColumnMajor(Faulty):
    """Reads address 0 (SIGSEGV) on a MaxPool whose storage_order is 1, and is right elsewhere."""

    def run(self, model, inputs):
        node = model.graph.node[-1]
        if node.op_type == "MaxPool" and _attributes(node).get("storage_order") == 1:
            ctypes.string_at(0)
        return self.correct(model, inputs)

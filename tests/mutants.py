"""Deliberately broken variants of the reference backend, each a bug real runtimes have had or
could plausibly have. A mutant patches the reference only while it runs as the backend under
test; the suite's expectations are computed before, by the intact reference."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, ContextManager
from unittest import mock

import ml_dtypes
import numpy as np

from reference_backend import backend as rb
from reference_backend.geometry import Axis

POOL_AXES, MAX_POOL, MAX_UNPOOL, UNPOOL_SHAPE, CLAMP = rb.pool_axes, rb.max_pool, rb.max_unpool, rb.unpool_shape, rb._clamp
OPENVINO_AXES = rb.openvino_axes


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    patch: Callable[[], ContextManager]


def geometry(change: Callable) -> Callable[[], ContextManager]:
    """Rewrite pool_axes' arguments: change(spatial, kernel, strides, pads, dilations, auto_pad, ceil_mode)."""
    def wrapped(*args):
        return POOL_AXES(*change(*args))
    return lambda: mock.patch.object(rb, "pool_axes", wrapped)


def axes_result(change: Callable) -> Callable[[], ContextManager]:
    """Rewrite the axes pool_axes returns: change(axes, auto_pad, ceil_mode)."""
    def wrapped(spatial, kernel, strides, pads, dilations, auto_pad, ceil_mode):
        return tuple(change(POOL_AXES(spatial, kernel, strides, pads, dilations, auto_pad, ceil_mode),
                            auto_pad, ceil_mode))
    return lambda: mock.patch.object(rb, "pool_axes", wrapped)


def pooled(change: Callable) -> Callable[[], ContextManager]:
    """Rewrite max_pool: change(x, axes, storage_order) -> (y, indices), indices always computed."""
    def wrapped(x, axes, storage_order=0, with_indices=True):
        return change(x, axes, storage_order)
    return lambda: mock.patch.object(rb, "max_pool", wrapped)


def with_results(change: Callable) -> Callable[[], ContextManager]:
    """Rewrite max_pool's results: change(y, indices, x, axes) -> (y, indices)."""
    def wrapped(x, axes, storage_order=0):
        y, indices = MAX_POOL(x, axes, storage_order)
        return change(y, indices, x, axes)
    return pooled(wrapped)


def _split(total, upper):
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)


def _same_output_is_input(axes, auto_pad, ceil_mode):
    if not auto_pad.startswith("SAME"):
        return axes
    changed = []
    for a in axes:
        begin, end = _split(max(0, (a.size - 1) * a.stride + a.extent - a.size), auto_pad == "SAME_UPPER")
        changed.append(Axis(a.size, a.kernel, a.stride, a.dilation, begin, end, a.size))
    return changed


def _same_total_without_dilation(axes, auto_pad, ceil_mode):
    if not auto_pad.startswith("SAME"):
        return axes
    changed = []
    for a in axes:
        total = (-(-a.size // a.stride) - 1) * a.stride + a.kernel - a.size
        begin, end = _split(total, auto_pad == "SAME_UPPER")
        out = (a.size + total - a.extent) // a.stride + 1
        changed.append(Axis(a.size, a.kernel, a.stride, a.dilation, begin, end, max(out, 0)))
    return changed


def _valid_size_without_dilation(axes, auto_pad, ceil_mode):
    if auto_pad != "VALID":
        return axes
    return [dataclasses.replace(a, out=max(0, -(-(a.size - a.kernel + 1) // a.stride))) for a in axes]


def _drop_window_on_last_element(axes, auto_pad, ceil_mode):
    if not ceil_mode or auto_pad != "NOTSET":
        return axes
    return [dataclasses.replace(a, out=a.out - 1) if a.out > 0 and (a.out - 1) * a.stride >= a.size + a.pad_begin - 1
            else a for a in axes]


def _zero_padding(x, axes, storage_order=0):
    widths = [(0, 0), (0, 0)] + [(a.pad_begin, a.pad_end + a.end_overhang) for a in axes]
    padded = np.pad(x, widths)
    return MAX_POOL(padded, tuple(Axis(s, a.kernel, a.stride, a.dilation, 0, 0, a.out)
                                  for s, a in zip(padded.shape[2:], axes)), storage_order)


def _window_touches_padding(axes, shape):
    touches = np.zeros(shape[2:], dtype=bool)
    for axis, a in enumerate(axes):
        per_output = np.array([any(not 0 <= p < a.size for p in a.positions(o)) for o in range(a.out)], dtype=bool)
        touches |= per_output.reshape([-1 if i == axis else 1 for i in range(len(axes))])
    return np.broadcast_to(touches, shape)


def _padding_wins_at_lowest(y, indices, x, axes):
    lowest = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
    return y, np.where((y.astype(np.float64) == lowest) & _window_touches_padding(axes, y.shape), -1, indices)


def _floor_at_lowest_finite(y, indices, x, axes):
    if np.issubdtype(x.dtype, np.integer):
        return y, indices
    finite_min = ml_dtypes.finfo(x.dtype).min if x.dtype == ml_dtypes.bfloat16 else np.finfo(x.dtype).min
    return np.maximum(y.astype(np.float64), float(finite_min)).astype(x.dtype), indices


def _index_in_padded_layout(y, indices, x, axes):
    padded = [a.pad_begin + a.size + a.pad_end for a in axes]
    plane, within = np.divmod(np.maximum(indices, 0), max(int(np.prod(x.shape[2:])), 1))
    coords = np.unravel_index(within, x.shape[2:]) if x.size else [within] * len(axes)
    flat = plane
    for c, a, extent in zip(coords, axes, padded):
        flat = flat * extent + c + a.pad_begin
    return y, np.where(indices >= 0, flat, indices)


def _int8_as_uint8(x, axes, storage_order=0):
    if x.dtype != np.int8:
        return MAX_POOL(x, axes, storage_order)
    y, indices = MAX_POOL(x.view(np.uint8), axes, storage_order)
    return y.view(np.int8), indices


def _bfloat16_through_float16(x, axes, storage_order=0):
    if x.dtype != ml_dtypes.bfloat16:
        return MAX_POOL(x, axes, storage_order)
    y, indices = MAX_POOL(x.astype(np.float16), axes, storage_order)
    return y.astype(ml_dtypes.bfloat16), indices


def _refuse_empty_batch(x, axes, storage_order=0):
    if x.shape[0] == 0:
        raise RuntimeError("empty batch")
    return MAX_POOL(x, axes, storage_order)


def _unpool_per_plane(x, indices, shape):
    plane = int(np.prod(shape[2:]))
    offsets = np.arange(int(np.prod(x.shape[:2]))).reshape(x.shape[:2] + (1,) * (x.ndim - 2)) * plane
    return MAX_UNPOOL(x, indices + offsets, shape)


def _unpool_ones_elsewhere(x, indices, shape):
    y = MAX_UNPOOL(x, indices, shape)
    written = np.zeros(y.size, dtype=bool)
    written[indices.reshape(-1)] = True
    return np.where(written.reshape(y.shape), y, np.ones_like(y))


def _ignore_output_shape():
    original = rb._MaxUnpool.__call__
    return mock.patch.object(rb._MaxUnpool, "__call__", lambda self, inputs: original(self, inputs[:2]))


def _no_type_check():
    return mock.patch.object(rb._Node, "check_type", lambda self, x: None)


def _pool_outputs(change):
    """Rewrite what a MaxPool node returns: change(node, outputs) -> outputs."""
    original = rb._MaxPool.__call__
    return lambda: mock.patch.object(rb._MaxPool, "__call__", lambda self, inputs: change(self, original(self, inputs)))


def _indices_channels_last(node, outputs):
    if node.channels_last and len(outputs) == 2:
        outputs[1] = np.ascontiguousarray(np.moveaxis(outputs[1], 1, -1))
    return outputs


def _layout_ignored():
    original = rb._MaxPool.__call__

    def run_channels_first(self, inputs):
        with mock.patch.object(self, "channels_last", False):
            return original(self, inputs)
    return mock.patch.object(rb._MaxPool, "__call__", run_channels_first)


def openvino_geometry(change: Callable) -> Callable[[], ContextManager]:
    """Rewrite the axes openvino_axes returns: change(axes, auto_pad, rounding_type) -> axes."""
    def wrapped(spatial, kernel, strides, pads_begin, pads_end, dilations=None, auto_pad="explicit", rounding_type="floor"):
        axes = OPENVINO_AXES(spatial, kernel, strides, pads_begin, pads_end, dilations, auto_pad, rounding_type)
        return tuple(change(axes, auto_pad, rounding_type))
    return lambda: mock.patch.object(rb, "openvino_axes", wrapped)


def _onnx_drop_rule(axes, auto_pad, rounding_type):
    """ONNX's ceil_mode rule: drop a last window that starts past the input."""
    return [dataclasses.replace(a, out=a.out - 1) if a.out > 1 and (a.out - 1) * a.stride >= a.size + a.pad_begin
            else a for a in axes]


def _valid_floors(axes, auto_pad, rounding_type):
    if auto_pad != "valid":
        return axes
    return [dataclasses.replace(a, out=(a.size - a.extent) // a.stride + 1) for a in axes]


def _attribute_dropped(name: str) -> Callable[[], ContextManager]:
    """The OpenVINO node runs as if ``name`` were not set."""
    original = rb._OpenVinoMaxPool.__call__

    def without(self, inputs):
        with mock.patch.object(self, "attrs", {k: v for k, v in self.attrs.items() if k != name}):
            return original(self, inputs)
    return lambda: mock.patch.object(rb._OpenVinoMaxPool, "__call__", without)


def _interleave_pads(pads):
    if not pads:
        return pads
    return list(pads[0::2]) + list(pads[1::2])


MUTANTS = [
    Mutant("ceil_mode_ignored", "ceil_mode is read but floor is always used",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, p, d, ap, 0))),
    Mutant("floor_as_ceil", "the output size is always rounded up",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, p, d, ap, 1))),
    Mutant("ceil_drops_window_on_last_element", "ceil_mode's drop rule is off by one: it drops a window starting on the last element",
           axes_result(_drop_window_on_last_element)),
    Mutant("same_split_swapped", "SAME_UPPER puts the odd pad at the beginning, SAME_LOWER at the end",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, p, d, {"SAME_UPPER": "SAME_LOWER", "SAME_LOWER": "SAME_UPPER"}.get(ap, ap), c))),
    Mutant("same_output_is_input", "SAME keeps the input size whatever the stride (the old attribute text)",
           axes_result(_same_output_is_input)),
    Mutant("same_total_without_dilation", "the SAME pad total uses the kernel, not its dilated extent",
           axes_result(_same_total_without_dilation)),
    Mutant("valid_size_without_dilation", "the VALID output size uses the kernel, not its dilated extent",
           axes_result(_valid_size_without_dilation)),
    Mutant("dilations_ignored", "dilations are read but every kernel is dense",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, p, None, ap, c))),
    Mutant("pads_interleaved", "pads are read as [x1_begin, x1_end, x2_begin, x2_end]",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, _interleave_pads(p), d, ap, c))),
    Mutant("end_pads_ignored", "only the begin pads are applied",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, (list(p[:len(k)]) + [0] * len(k)) if p else p, d, ap, c))),
    Mutant("strides_reversed", "strides are applied to the axes in reverse order",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, list(st)[::-1] if st else st, p, d, ap, c))),
    Mutant("kernel_reversed", "kernel_shape is applied to the axes in reverse order",
           geometry(lambda s, k, st, p, d, ap, c: (s, list(k)[::-1], st, p, d, ap, c))),
    Mutant("default_stride_is_kernel", "a missing strides attribute defaults to the kernel size (Keras' convention)",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st or list(k), p, d, ap, c))),
    Mutant("auto_pad_ignored", "auto_pad is read but explicit pads (none) are used",
           geometry(lambda s, k, st, p, d, ap, c: (s, k, st, p, d, "NOTSET", c))),
    Mutant("padding_is_zero", "padding takes part in the maximum with value 0",
           pooled(_zero_padding)),
    Mutant("padding_wins_at_lowest", "padding takes part with the lowest value and wins ties, so indices point at it",
           with_results(_padding_wins_at_lowest)),
    Mutant("accumulator_starts_at_lowest_finite", "the running maximum starts at the lowest finite value, so -inf never wins",
           with_results(_floor_at_lowest_finite)),
    Mutant("accumulator_starts_at_zero", "the running maximum starts at 0 (as if a ReLU were fused)",
           with_results(lambda y, i, x, a: (np.maximum(y, np.zeros((), y.dtype)), i))),
    Mutant("negative_zero_made_positive", "a maximum of -0.0 comes out as +0.0",
           with_results(lambda y, i, x, a: (np.where(y.astype(np.float64) == 0, np.zeros((), y.dtype), y), i))),
    Mutant("indices_per_plane", "indices count within each (n, c) plane, like PyTorch's",
           with_results(lambda y, i, x, a: (y, np.where(i >= 0, i % max(int(np.prod(x.shape[2:])), 1), i)))),
    Mutant("indices_in_padded_layout", "indices count positions of the padded tensor",
           with_results(_index_in_padded_layout)),
    Mutant("storage_order_ignored", "storage_order 1 gives row-major indices",
           pooled(lambda x, axes, storage_order=0: MAX_POOL(x, axes, 0))),
    Mutant("storage_order_always_column", "indices are column-major whatever storage_order says",
           pooled(lambda x, axes, storage_order=0: MAX_POOL(x, axes, 1))),
    Mutant("indices_int32", "Indices come back as int32",
           with_results(lambda y, i, x, a: (y, i.astype(np.int32)))),
    Mutant("float16_computed_as_float32", "float16 inputs give float32 outputs",
           with_results(lambda y, i, x, a: (y.astype(np.float32) if y.dtype == np.float16 else y, i))),
    Mutant("int8_compared_unsigned", "int8 values are compared as unsigned bytes",
           pooled(_int8_as_uint8)),
    Mutant("bfloat16_through_float16", "bfloat16 is computed through float16, losing its range",
           pooled(_bfloat16_through_float16)),
    Mutant("empty_batch_refused", "an input with N = 0 raises",
           pooled(_refuse_empty_batch)),
    Mutant("unpool_output_shape_ignored", "MaxUnpool ignores its output_shape input",
           _ignore_output_shape),
    Mutant("unpool_default_shape_without_pads", "MaxUnpool's default shape leaves the pads out",
           lambda: mock.patch.object(rb, "unpool_shape", lambda shape, k, s, p: UNPOOL_SHAPE(shape, k, s, None))),
    Mutant("unpool_indices_per_plane", "MaxUnpool reads indices within each (n, c) plane",
           lambda: mock.patch.object(rb, "max_unpool", _unpool_per_plane)),
    Mutant("unpool_not_zero_filled", "MaxUnpool leaves ones, not zeros, where nothing was written",
           lambda: mock.patch.object(rb, "max_unpool", _unpool_ones_elsewhere)),
    Mutant("attributes_not_validated", "models with impossible or unknown attributes are run anyway",
           lambda: mock.patch.object(rb, "_validate", lambda node, proto: None)),
    Mutant("element_types_not_checked", "element types a version does not allow are run anyway",
           _no_type_check),
    Mutant("nhwc_layout_ignored", "an NHWC MaxPool reads X as (N, C, spatial...)",
           _layout_ignored),
    Mutant("nhwc_indices_channels_last", "an NHWC MaxPool gives Indices Y's (N, spatial..., C) layout",
           _pool_outputs(_indices_channels_last)),
    Mutant("activation_ignored", "the fused Relu or Clip is not applied",
           lambda: mock.patch.object(rb, "_clamp", lambda y, low, high: y)),
    Mutant("openvino_ceil_drops_window", "OpenVINO's ceil drops a last window starting past the input, as ONNX's does",
           openvino_geometry(_onnx_drop_rule)),
    Mutant("openvino_valid_ignores_rounding", "OpenVINO's valid padding always floors, as MaxPool-8's formula reads",
           openvino_geometry(_valid_floors)),
    Mutant("openvino_axis_ignored", "OpenVINO's axis is ignored: indices count over the whole tensor",
           _attribute_dropped("axis")),
    Mutant("openvino_index_type_ignored", "OpenVINO's index_element_type is ignored: indices are always int64",
           _attribute_dropped("index_element_type")),
    Mutant("openvino_dilations_ignored", "OpenVINO's dilations are read but every kernel is dense",
           _attribute_dropped("dilations")),
    Mutant("activation_bounds_swapped", "activation_params are read as [max, min]",
           lambda: mock.patch.object(rb, "_clamp", lambda y, low, high: CLAMP(y, high, low))),
]

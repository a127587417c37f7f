"""Deliberately broken variants of the reference backend, each a bug real runtimes have had or
could plausibly have. A mutant is a subclass of the reference backend that overrides one of its
public hooks (``ReferenceBackend.axes``, ``pool``, ``unpool``...), or the reference following a
reading of a question the documents settle (``resolved`` in the registry): another reading of
such a question is a wrong answer. The suite's expectations come from the intact reference."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np

from conformance.load.cases import bundled_case_dir, load_registry
from conformance.semantics import OPENVINO_DOMAIN, QUESTIONS, Axis
from reference_backend import ReferenceBackend

MAX_POOL, MAX_UNPOOL, CLAMP = ReferenceBackend.pool, ReferenceBackend.unpool, ReferenceBackend.clamp


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    backend: type[ReferenceBackend]


def variant(**hooks: Callable) -> type[ReferenceBackend]:
    """The reference backend with some hooks replaced (each a function of cls and the hook's arguments)."""
    return type("Mutant", (ReferenceBackend,), {name: classmethod(hook) for name, hook in hooks.items()})


def geometry(change: Callable[[dict], dict]) -> type[ReferenceBackend]:
    """Rewrite an ai.onnx-style MaxPool's attributes before its windows are computed."""
    def axes(cls, domain, attrs, spatial):
        return ReferenceBackend.axes(domain, attrs if domain == OPENVINO_DOMAIN else change(dict(attrs)), spatial)
    return variant(axes=axes)


def axes_result(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the axes of an ai.onnx-style MaxPool: change(axes, auto_pad, ceil_mode)."""
    def axes(cls, domain, attrs, spatial):
        result = ReferenceBackend.axes(domain, attrs, spatial)
        if domain == OPENVINO_DOMAIN:
            return result
        return tuple(change(result, attrs.get("auto_pad", "NOTSET"), attrs.get("ceil_mode", 0)))
    return variant(axes=axes)


def pooled(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the pooling: change(x, axes, storage_order) -> (y, indices), indices always computed."""
    return variant(pool=lambda cls, x, axes, storage_order=0, with_indices=True: change(x, axes, storage_order))


def with_results(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the pooling's results: change(y, indices, x, axes) -> (y, indices)."""
    def wrapped(x, axes, storage_order=0):
        y, indices = MAX_POOL(x, axes, storage_order)
        return change(y, indices, x, axes)
    return pooled(wrapped)


def _split(total, upper):
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)


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


def _nan_resets_maximum(y, indices, x, axes):
    """A running maximum m = maxps(m, v) over each window's elements in row-major order: x86's
    maxps returns its second operand when either is NaN, so the element after a NaN replaces it."""
    if not np.issubdtype(x.dtype, np.floating) and x.dtype != ml_dtypes.bfloat16:
        return y, indices
    taps = itertools.product(*(range(a.kernel) for a in axes))
    outs = np.meshgrid(*[np.arange(a.out) for a in axes], indexing="ij")
    running = np.full(y.shape, np.nan)
    started = np.zeros(y.shape, bool)
    planes = x.astype(np.float64)
    for tap in taps:
        at = [o * a.stride - a.pad_begin + j * a.dilation for o, a, j in zip(outs, axes, tap)]
        inside = np.logical_and.reduce([(p >= 0) & (p < a.size) for p, a in zip(at, axes)])
        v = planes[(...,) + tuple(np.clip(p, 0, a.size - 1) for p, a in zip(at, axes))]
        moved = np.where(np.isnan(running) | np.isnan(v), v, np.maximum(running, v))
        running = np.where(inside & started, moved, np.where(inside & ~started, v, running))
        started |= inside
    return np.where(started, running, y.astype(np.float64)).astype(x.dtype), indices


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


def _unpool_per_plane(x, indices, shape, default_shape=None):
    plane = int(np.prod(shape[2:]))
    offsets = np.arange(int(np.prod(x.shape[:2]))).reshape(x.shape[:2] + (1,) * (x.ndim - 2)) * plane
    return MAX_UNPOOL(x, indices + offsets, shape, default_shape)


def _unpool_ones_elsewhere(x, indices, shape, default_shape=None):
    y = MAX_UNPOOL(x, indices, shape, default_shape)
    written = np.zeros(y.size, dtype=bool)
    written[indices.reshape(-1)] = True
    return np.where(written.reshape(y.shape), y, np.ones_like(y))


def openvino_geometry(change: Callable) -> type[ReferenceBackend]:
    """Rewrite the axes of an OpenVINO MaxPool: change(axes, auto_pad, rounding_type) -> axes."""
    def axes(cls, domain, attrs, spatial):
        result = ReferenceBackend.axes(domain, attrs, spatial)
        if domain != OPENVINO_DOMAIN:
            return result
        return tuple(change(result, attrs.get("auto_pad", "explicit"), attrs.get("rounding_type", "floor")))
    return variant(axes=axes)


def _onnx_drop_rule(axes, auto_pad, rounding_type):
    """ONNX's ceil_mode rule: drop a last window that starts past the input."""
    return [dataclasses.replace(a, out=a.out - 1) if a.out > 1 and (a.out - 1) * a.stride >= a.size + a.pad_begin
            else a for a in axes]


def _attribute_dropped(name: str) -> type[ReferenceBackend]:
    """The OpenVINO node runs as if ``name`` were not set."""
    def attributes(cls, domain, attrs):
        return {k: v for k, v in attrs.items() if k != name} if domain == OPENVINO_DOMAIN else attrs
    return variant(attributes=attributes)


def _interleave_pads(pads):
    if not pads:
        return pads
    return list(pads[0::2]) + list(pads[1::2])


def _with(attrs: dict, **changes) -> dict:
    """``attrs`` with ``changes``; a change to None removes the attribute."""
    return {k: v for k, v in {**attrs, **changes}.items() if v is not None}


def _other_readings_of_settled_questions() -> list[Mutant]:
    """Each reading of a question the documents settle, other than theirs: a wrong answer."""
    registry = load_registry(bundled_case_dir())
    return [Mutant(f"{key}:{reading}", registry[key].interpretations[reading],
                   ReferenceBackend.configured(f"{key}:{reading}"))
            for key, readings in QUESTIONS.items() if registry[key].status == "resolved"
            for reading in readings if reading != registry[key].reference]


MUTANTS = [
    Mutant("ceil_mode_ignored", "ceil_mode is read but floor is always used",
           geometry(lambda a: _with(a, ceil_mode=0))),
    Mutant("floor_as_ceil", "the output size is always rounded up",
           geometry(lambda a: _with(a, ceil_mode=1))),
    Mutant("ceil_drops_window_on_last_element", "ceil_mode's drop rule is off by one: it drops a window starting on the last element",
           axes_result(_drop_window_on_last_element)),
    Mutant("same_split_swapped", "SAME_UPPER puts the odd pad at the beginning, SAME_LOWER at the end",
           geometry(lambda a: _with(a, auto_pad={"SAME_UPPER": "SAME_LOWER", "SAME_LOWER": "SAME_UPPER"}.get(
               a.get("auto_pad"), a.get("auto_pad"))))),
    Mutant("same_total_without_dilation", "the SAME pad total uses the kernel, not its dilated extent",
           axes_result(_same_total_without_dilation)),
    Mutant("valid_size_without_dilation", "the VALID output size uses the kernel, not its dilated extent",
           axes_result(_valid_size_without_dilation)),
    Mutant("dilations_ignored", "dilations are read but every kernel is dense",
           geometry(lambda a: _with(a, dilations=None))),
    Mutant("pads_interleaved", "pads are read as [x1_begin, x1_end, x2_begin, x2_end]",
           geometry(lambda a: _with(a, pads=_interleave_pads(a.get("pads"))))),
    Mutant("end_pads_ignored", "only the begin pads are applied",
           geometry(lambda a: _with(a, pads=list(a["pads"][:len(a["kernel_shape"])]) + [0] * len(a["kernel_shape"])
                                    if a.get("pads") else None))),
    Mutant("strides_reversed", "strides are applied to the axes in reverse order",
           geometry(lambda a: _with(a, strides=list(a["strides"])[::-1] if a.get("strides") else None))),
    Mutant("kernel_reversed", "kernel_shape is applied to the axes in reverse order",
           geometry(lambda a: _with(a, kernel_shape=list(a["kernel_shape"])[::-1]))),
    Mutant("default_stride_is_kernel", "a missing strides attribute defaults to the kernel size (Keras' convention)",
           geometry(lambda a: _with(a, strides=a.get("strides") or list(a["kernel_shape"])))),
    Mutant("auto_pad_ignored", "auto_pad is read but explicit pads (none) are used",
           geometry(lambda a: _with(a, auto_pad="NOTSET"))),
    Mutant("padding_is_zero", "padding takes part in the maximum with value 0",
           pooled(_zero_padding)),
    Mutant("padding_wins_at_lowest", "padding takes part with the lowest value and wins ties, so indices point at it",
           with_results(_padding_wins_at_lowest)),
    Mutant("accumulator_starts_at_lowest_finite", "the running maximum starts at the lowest finite value, so -inf never wins",
           with_results(_floor_at_lowest_finite)),
    Mutant("nan_resets_running_maximum", "the element after a NaN replaces the running maximum (x86 maxps(maximum, x)), "
           "so [1, NaN, NaN, -1] pools to -1", with_results(_nan_resets_maximum)),
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
           variant(unpool_shape=lambda cls, x_shape, attrs, output_shape: ReferenceBackend.unpool_shape(x_shape, attrs, None))),
    Mutant("unpool_default_shape_without_pads", "MaxUnpool's default shape leaves the pads out",
           variant(unpool_shape=lambda cls, x_shape, attrs, output_shape: ReferenceBackend.unpool_shape(
               x_shape, _with(attrs, pads=None) if output_shape is None else attrs, output_shape))),
    Mutant("unpool_indices_per_plane", "MaxUnpool reads indices within each (n, c) plane",
           variant(unpool=lambda cls, *args: _unpool_per_plane(*args))),
    Mutant("unpool_not_zero_filled", "MaxUnpool leaves ones, not zeros, where nothing was written",
           variant(unpool=lambda cls, *args: _unpool_ones_elsewhere(*args))),
    Mutant("attributes_not_validated", "models with impossible or unknown attributes are run anyway",
           variant(validate=lambda cls, node, proto: None)),
    Mutant("element_types_not_checked", "element types a version does not allow are run anyway",
           variant(check_type=lambda cls, node, x: None)),
    Mutant("nhwc_layout_ignored", "an NHWC MaxPool reads X as (N, C, spatial...)",
           variant(channels_last=lambda cls, domain, op_type: False)),
    Mutant("activation_ignored", "the fused Relu or Clip is not applied",
           variant(clamp=lambda cls, y, low, high: y)),
    Mutant("openvino_ceil_drops_window", "OpenVINO's ceil drops a last window starting past the input, as ONNX's does",
           openvino_geometry(_onnx_drop_rule)),
    Mutant("openvino_axis_ignored", "OpenVINO's axis is ignored: indices count over the whole tensor",
           _attribute_dropped("axis")),
    Mutant("openvino_index_type_ignored", "OpenVINO's index_element_type is ignored: indices are always int64",
           _attribute_dropped("index_element_type")),
    Mutant("openvino_dilations_ignored", "OpenVINO's dilations are read but every kernel is dense",
           _attribute_dropped("dilations")),
    Mutant("activation_bounds_swapped", "activation_params are read as [max, min]",
           variant(clamp=lambda cls, y, low, high: CLAMP(y, high, low))),
] + _other_readings_of_settled_questions()

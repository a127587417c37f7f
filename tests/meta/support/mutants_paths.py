"""Broken backends that go wrong on one code path only, as real kernels do.

Each wraps the intact reference backend through its public interface: it reads the model's node,
and where the path selector it is named after holds (a rank, Indices asked for or not, an element
type, N or C sizes, a channel-tile remainder, a kernel over 9 taps, an output width that is not a
multiple of the vector width, an attribute written out...) it changes the attributes or the
inputs, runs the reference, and changes its outputs the way the modelled kernel would. Elsewhere it
answers as the reference does. `conformance/docgen/path_selectors.yaml` cites the source line behind each
selector; the mutation self-test (tests/meta/test_mutants.py) requires the fixed suite to catch each.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

from reference_backend import ReferenceBackend
from conformance.semantics import pool_axes

Outputs = list[np.ndarray]
CHANNELS_LAST_DOMAINS = ("com.ms.internal.nhwc", "com.microsoft")
OPENVINO_DOMAIN = "org.openvinotoolkit"


@dataclass(frozen=True)
class PathMutant:
    name: str
    bug: str
    run: Callable[[onnx.ModelProto, dict], Outputs]


@dataclass(frozen=True)
class Call:
    """The model under test as a kernel sees it: its last node, attributes and first input."""

    model: onnx.ModelProto
    inputs: dict

    @property
    def node(self) -> onnx.NodeProto:
        return self.model.graph.node[-1]

    @property
    def domain(self) -> str:
        return self.node.domain or "ai.onnx"

    @property
    def attrs(self) -> dict:
        return {a.name: helper.get_attribute_value(a) for a in self.node.attribute}

    @property
    def x(self) -> np.ndarray:
        return self.inputs[self.model.graph.input[0].name]

    @property
    def channels_last(self) -> bool:
        return self.domain in CHANNELS_LAST_DOMAINS

    @property
    def channels(self) -> int:
        return self.x.shape[-1 if self.channels_last else 1] if self.x.ndim > 1 else 0

    @property
    def rank(self) -> int:
        """Spatial rank."""
        return self.x.ndim - 2

    @property
    def wants_indices(self) -> bool:
        return len(self.node.output) > 1 and bool(self.node.output[1])

    def is_pool(self, *domains: str) -> bool:
        return self.node.op_type in ("MaxPool", "NhwcMaxPool") and self.domain in (domains or ("ai.onnx",))

    def reference(self, model: onnx.ModelProto | None = None, inputs: dict | None = None) -> Outputs:
        model, inputs = model or self.model, inputs or self.inputs
        return ReferenceBackend.prepare(model).run([inputs[vi.name] for vi in model.graph.input])

    def with_attributes(self, **changes) -> onnx.ModelProto:
        """A copy of the model whose node has ``changes`` (None removes an attribute)."""
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        node = model.graph.node[-1]
        kept = [a for a in node.attribute if a.name not in changes]
        del node.attribute[:]
        node.attribute.extend(kept)
        for name, value in changes.items():
            if value is not None:
                node.attribute.append(helper.make_attribute(name, value))
        return model

    def through(self, dtype) -> Outputs:
        """Run with X converted to ``dtype`` and Y converted back, as a kernel that widens or
        narrows its input would (Indices are kept)."""
        original = self.x.dtype
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        model.graph.input[0].type.tensor_type.elem_type = elem
        model.graph.output[0].type.tensor_type.elem_type = elem
        if np.dtype(dtype).itemsize == original.itemsize and np.issubdtype(dtype, np.integer) \
                and np.issubdtype(original, np.integer):
            x = self.x.view(dtype)
            outputs = self.reference(model, {**self.inputs, model.graph.input[0].name: x})
            outputs[0] = outputs[0].view(original)
        else:
            x = self.x.astype(dtype)
            outputs = self.reference(model, {**self.inputs, model.graph.input[0].name: x})
            outputs[0] = outputs[0].astype(original)
        return outputs

    def axes(self):
        a = self.attrs
        spatial = self.channels_first_x.shape[2:]
        return pool_axes(spatial, a["kernel_shape"], a.get("strides"), a.get("pads"), a.get("dilations"),
                         a.get("auto_pad", b"NOTSET").decode(), a.get("ceil_mode", 0))

    @property
    def channels_first_x(self) -> np.ndarray:
        return np.moveaxis(self.x, -1, 1) if self.channels_last else self.x


def _lowest(dtype) -> float:
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return -np.inf


def tap_pool(x: np.ndarray, axes, positions=None, taps: int | None = None,
             report: Callable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Max pooling by kernel taps (row-major order, first maximum wins), with hooks a broken kernel
    changes: ``positions(axis, a, o)`` the window's positions on one axis, ``taps`` how many taps
    are read, ``report(t, tap, window)`` the position reported for a maximum found at tap t."""
    positions = positions or (lambda i, a, o: a.positions(o))
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    outs = tuple(a.out for a in axes)
    y = np.full((n, c) + outs, _lowest(x.dtype), dtype=x.dtype)
    where = np.full((n, c) + outs, -1, dtype=np.int64)
    plane = int(np.prod(spatial))
    planes = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * plane
    for o in itertools.product(*(range(v) for v in outs)):
        window = list(itertools.product(*(positions(i, a, o[i]) for i, a in enumerate(axes))))
        best = np.full((n, c), _lowest(x.dtype), dtype=x.dtype)
        at = np.full((n, c), -1, dtype=np.int64)
        for t, tap in enumerate(window):
            if taps is not None and t >= taps:
                break
            if any(not 0 <= p < s for p, s in zip(tap, spatial)):
                continue
            value = x[(slice(None), slice(None)) + tap]
            wins = (at < 0) | (value > best)
            reported = report(t, tap, window) if report else tap
            best = np.where(wins, value, best)
            at = np.where(wins, int(np.ravel_multi_index(reported, spatial)), at)
        y[(slice(None), slice(None)) + o] = best
        where[(slice(None), slice(None)) + o] = np.where(at >= 0, planes + at, -1)
    return y, where


def _outputs(call: Call, y: np.ndarray, indices: np.ndarray) -> Outputs:
    return [y, indices][: len(call.node.output)]


def _on_path(selector: Callable[[Call], bool], broken: Callable[[Call], Outputs]):
    def run(model, inputs):
        call = Call(model, inputs)
        return broken(call) if selector(call) else call.reference()
    return run


def _map_output(position: int, change: Callable[[Call, np.ndarray], np.ndarray]) -> Callable[[Call], Outputs]:
    """The reference's outputs with output ``position`` (0: Y, 1: Indices) changed."""
    def broken(call: Call) -> Outputs:
        outputs = call.reference()
        outputs[position] = change(call, outputs[position].copy())
        return outputs
    return broken


def _map_y(change: Callable[[Call, np.ndarray], np.ndarray]) -> Callable[[Call], Outputs]:
    return _map_output(0, change)


def _map_indices(change: Callable[[Call, np.ndarray], np.ndarray]) -> Callable[[Call], Outputs]:
    return _map_output(1, change)


def _attributes(change: Callable[[Call], dict]) -> Callable[[Call], Outputs]:
    return lambda call: call.reference(call.with_attributes(**change(call)))


def _channel_view(call: Call, y: np.ndarray) -> np.ndarray:
    """Y with channels on axis 1, whatever the layout (a view: writes reach Y)."""
    return np.moveaxis(y, -1, 1) if call.channels_last else y


# -- values -------------------------------------------------------------------------------------

def _floor_neg_inf(call: Call, y: np.ndarray) -> np.ndarray:
    finite = ml_dtypes.finfo(y.dtype).min if y.dtype == ml_dtypes.bfloat16 else np.finfo(y.dtype).min
    return np.where(y.astype(np.float64) == -np.inf, finite, y).astype(y.dtype)


def _remainder_channels_zeroed(block: int):
    def change(call: Call, y: np.ndarray) -> np.ndarray:
        view = _channel_view(call, y)
        view[:, call.channels - call.channels % block:] = 0
        return y
    return change


def _tail_tile_reads_previous_tile(call: Call, y: np.ndarray) -> np.ndarray:
    view = _channel_view(call, y)
    c = call.channels
    for channel in range(c - c % 16, c):
        view[:, channel] = view[:, channel - 16]
    return y


def _planes(call: Call) -> int:
    return call.x.shape[0] * call.channels if call.x.ndim > 2 else 0


def _last_partial_block_of_planes_zeroed(block: int):
    def change(call: Call, y: np.ndarray) -> np.ndarray:
        view = _channel_view(call, y)
        n, c = view.shape[:2]
        for plane in range(n * c // block * block, n * c):
            view[plane // c, plane % c] = 0
        return y
    return change


def _second_half_of_planes_reads_the_first(call: Call, y: np.ndarray) -> np.ndarray:
    view = _channel_view(call, y)
    n, c = view.shape[:2]
    pooled = [view[plane // c, plane % c].copy() for plane in range(n * c)]
    half = -(-len(pooled) // 2)
    for plane in range(half, len(pooled)):
        view[plane // c, plane % c] = pooled[plane - half]
    return y


def _last_column_repeats(call: Call, y: np.ndarray) -> np.ndarray:
    y[..., -1] = y[..., -2]
    return y


def _lowest_seed(value):
    return lambda call, y: np.maximum(y, np.array(value, dtype=y.dtype))


def _first_nine_taps(call: Call) -> Outputs:
    y, indices = tap_pool(call.x, call.axes(), taps=9)
    return _outputs(call, y, indices)


def _later_pass_reports_first_tap(call: Call) -> Outputs:
    def report(t, tap, window):
        if t < 9:
            return tap
        inside = [w for w in window if all(0 <= p < s for p, s in zip(w, call.x.shape[2:]))]
        return inside[0]
    y, indices = tap_pool(call.x, call.axes(), report=report)
    return _outputs(call, y, indices)


def _dense_in_the_border(call: Call) -> Outputs:
    axes = call.axes()

    def touches_padding(a, o):
        return any(not 0 <= p < a.size for p in a.positions(o))

    def positions(i, a, o):
        if touches_padding(a, o):
            return [a.start(o) + j for j in range(a.kernel)]
        return a.positions(o)
    y, indices = tap_pool(call.x, axes, positions=positions)
    return _outputs(call, y, indices)


def _global_pool_with_pads(call: Call) -> Outputs:
    x = call.x
    y = x.reshape(x.shape[:2] + (-1,)).max(axis=-1).reshape(x.shape[:2] + (1,) * call.rank)
    return [y]


def _without_activation(call: Call) -> Outputs:
    y = call.reference()[0]
    plain = call.reference(call.with_attributes(activation=None, activation_params=None))[0]
    c = call.channels
    _channel_view(call, y)[:, c - c % 8:] = _channel_view(call, plain)[:, c - c % 8:]
    return [y] + call.reference()[1:]


# -- indices ------------------------------------------------------------------------------------

def _plane_offset_without_batch(call: Call, indices: np.ndarray) -> np.ndarray:
    n, c = call.x.shape[:2]
    plane = int(np.prod(call.x.shape[2:]))
    batch = np.arange(n).reshape((n,) + (1,) * (indices.ndim - 1))
    return np.where(indices >= 0, indices - batch * c * plane, indices)


def _plane_offset_by_output_size(call: Call, indices: np.ndarray) -> np.ndarray:
    plane_in = int(np.prod(call.x.shape[2:]))
    plane_out = int(np.prod(indices.shape[2:]))
    which, within = np.divmod(indices, max(plane_in, 1))
    return np.where(indices >= 0, which * plane_out + within, indices)


def _column_major_3d_drops_depth(call: Call, indices: np.ndarray) -> np.ndarray:
    h, w, d = call.x.shape[2:]
    plane, within = np.divmod(indices, h * w * d)
    # the reference's column-major index is hh + ww*h + dd*h*w; this kernel forgets the depth term
    return np.where(indices >= 0, plane * h * w * d + within % (h * w), indices)


# -- attributes ---------------------------------------------------------------------------------

def _swap_same(call: Call) -> dict:
    return {"auto_pad": b"SAME_UPPER"}


def _ceil_present(call: Call) -> dict:
    return {"ceil_mode": 1}


def _storage_order_present(call: Call) -> dict:
    return {"storage_order": 1}


def _notset_drops_pads(call: Call) -> dict:
    return {"pads": None}


def _floor_with_begin_pads(call: Call) -> dict:
    return {"ceil_mode": 0}


def _end_pads_zero(last_only: bool):
    def change(call: Call) -> dict:
        pads = list(call.attrs["pads"])
        rank = len(pads) // 2
        for axis in ([rank - 1] if last_only else range(rank)):
            pads[rank + axis] = 0
        return {"pads": pads}
    return change


def _floor_on_generic_path(call: Call) -> dict:
    return {"ceil_mode": 0}


def _openvino_axis_by_spatial_rank(call: Call) -> dict:
    return {"axis": max(call.attrs["axis"] + call.rank, 0)}


def _openvino_floor(call: Call) -> dict:
    return {"rounding_type": b"floor"}


def _unpool_without_output_shape(call: Call) -> Outputs:
    model = onnx.ModelProto()
    model.CopyFrom(call.model)
    node = model.graph.node[-1]
    del node.input[2:]
    return call.reference(model)


def _unpool_last_end_pad_ignored(call: Call) -> Outputs:
    return _attributes(_end_pads_zero(last_only=True))(call)


# -- selectors ----------------------------------------------------------------------------------

def _has(call: Call, name: str) -> bool:
    return name in call.attrs


def _pads(call: Call) -> list[int]:
    return list(call.attrs.get("pads", ()))


def _kernel_taps(call: Call) -> int:
    return int(np.prod(call.attrs.get("kernel_shape", [1])))


def _float(call: Call) -> bool:
    return call.x.dtype.kind == "f" or call.x.dtype == ml_dtypes.bfloat16


def _mlas(call: Call) -> bool:
    """ONNX Runtime's MLAS path: float32 values, no Indices, no dilation."""
    return call.is_pool() and call.x.dtype == np.float32 and not call.wants_indices \
        and all(d == 1 for d in call.attrs.get("dilations", [1]))


def _output_width(call: Call) -> int:
    return call.reference()[0].shape[-2 if call.channels_last else -1]


PATH_MUTANTS = [
    PathMutant("mlas_2d_neg_inf_as_lowest_finite",
               "the 2-D float32 values kernel seeds its maximum with -FLT_MAX, so -inf comes out as -FLT_MAX",
               _on_path(lambda c: _mlas(c) and c.rank == 2, _map_y(_floor_neg_inf))),
    PathMutant("indices_3d_neg_inf_as_lowest_finite",
               "the 3-D kernel with Indices seeds its maximum with the type's lowest finite value",
               _on_path(lambda c: c.is_pool() and c.rank == 3 and c.wants_indices and _float(c),
                        _map_y(_floor_neg_inf))),
    PathMutant("channel_remainder_of_8_zeroed",
               "a C-blocked kernel (blocks of 8) skips the last C % 8 channels, leaving zeros",
               _on_path(lambda c: c.is_pool("ai.onnx", *CHANNELS_LAST_DOMAINS) and c.channels > 8
                        and c.channels % 8 != 0, _map_y(_remainder_channels_zeroed(8)))),
    PathMutant("planes_past_a_block_of_64_never_run",
               "the N*C planes handed to threads in blocks of 64: a last partial block is never run, leaving zeros",
               _on_path(lambda c: c.is_pool("ai.onnx", *CHANNELS_LAST_DOMAINS) and _planes(c) > 64
                        and _planes(c) % 64 != 0, _map_y(_last_partial_block_of_planes_zeroed(64)))),
    PathMutant("second_thread_pools_the_first_threads_planes",
               "an input of over 2**17 elements split between two threads: the second pools the first one's planes",
               _on_path(lambda c: c.is_pool("ai.onnx", *CHANNELS_LAST_DOMAINS) and c.x.size > 1 << 17
                        and _planes(c) > 1, _map_y(_second_half_of_planes_reads_the_first))),
    PathMutant("channel_tile_16_tail_reads_previous_tile",
               "an 8-bit or float16 kernel with 16-channel tiles reads the tail tile 16 channels too early",
               _on_path(lambda c: c.is_pool("ai.onnx", *CHANNELS_LAST_DOMAINS) and c.channels > 16
                        and c.channels % 16 != 0 and c.x.dtype in (np.int8, np.uint8, np.float16),
                        _map_y(_tail_tile_reads_previous_tile))),
    PathMutant("multipass_kernel_reads_only_9_taps",
               "a 9p8x-style multipass kernel stops after its first pass: taps beyond the ninth are never read",
               _on_path(lambda c: c.is_pool() and not c.wants_indices and _kernel_taps(c) > 9, _first_nine_taps)),
    PathMutant("argmax_multipass_reports_first_tap",
               "an argmax kernel reports, for a maximum found after the first 9 taps, the window's first element",
               _on_path(lambda c: c.is_pool() and c.wants_indices and _kernel_taps(c) > 9,
                        _later_pass_reports_first_tap)),
    PathMutant("vector_row_last_column_wrong",
               "a float32 row kernel 4 outputs wide repeats the previous column when the output width is not a multiple of 4",
               _on_path(lambda c: _mlas(c) and c.rank >= 2 and _output_width(c) > 4 and _output_width(c) % 4 != 0,
                        _map_y(_last_column_repeats))),
    PathMutant("global_kernel_taken_despite_pads",
               "a kernel as large as the input takes the global-pooling path even with pads or strides",
               _on_path(lambda c: _mlas(c) and list(c.attrs["kernel_shape"]) == list(c.x.shape[2:])
                        and any(_pads(c)), _global_pool_with_pads)),
    PathMutant("wide_row_generic_path_drops_end_pad",
               "a row too wide for the vector kernel's buffer goes to a generic kernel that drops the last axis' end pad",
               _on_path(lambda c: _mlas(c) and c.x.shape[-1] > 1024 and any(_pads(c)),
                        _attributes(_end_pads_zero(last_only=True)))),
    PathMutant("generic_path_stride_over_2_floors",
               "the generic kernel for a last-axis stride > 2 ignores ceil_mode",
               _on_path(lambda c: _mlas(c) and c.attrs.get("ceil_mode", 0) == 1
                        and list(c.attrs.get("strides", [1]))[-1] > 2, _attributes(_floor_on_generic_path))),
    PathMutant("pool_1d_end_pad_ignored",
               "the 1-D kernel reads only the begin pads",
               _on_path(lambda c: c.is_pool() and c.rank == 1 and any(_pads(c)[1:]),
                        _attributes(_end_pads_zero(last_only=False)))),
    PathMutant("float64_3d_through_float32",
               "the 3-D float64 kernel computes in float32",
               _on_path(lambda c: c.is_pool() and c.rank == 3 and c.x.dtype == np.float64,
                        lambda c: c.through(np.float32))),
    PathMutant("float64_indices_path_through_float32",
               "the float64 kernel with Indices compares in float32: maxima closer than float32 resolves tie",
               _on_path(lambda c: c.is_pool() and c.wants_indices and c.x.dtype == np.float64,
                        lambda c: c.through(np.float32))),
    PathMutant("indices_3d_plane_offset_ignores_batch",
               "3-D Indices add the channel's plane offset but not the batch's",
               _on_path(lambda c: c.is_pool() and c.rank == 3 and c.wants_indices and c.x.shape[0] > 1,
                        _map_indices(_plane_offset_without_batch))),
    PathMutant("indices_plane_offset_by_output_plane",
               "Indices offset each plane by the output plane's size (y_step) instead of the input's",
               _on_path(lambda c: c.is_pool() and c.rank == 2 and c.wants_indices and c.x.shape[0] * c.x.shape[1] > 1,
                        _map_indices(_plane_offset_by_output_size))),
    PathMutant("storage_order_3d_drops_depth",
               "column-major Indices in 3-D leave out the depth term",
               _on_path(lambda c: c.is_pool() and c.rank == 3 and c.wants_indices
                        and c.attrs.get("storage_order", 0) == 1, _map_indices(_column_major_3d_drops_depth))),
    PathMutant("dilation_ignored_in_padded_border",
               "windows that reach into the padding are read densely: dilation is applied only in the interior",
               _on_path(lambda c: c.is_pool() and any(d > 1 for d in c.attrs.get("dilations", [1])),
                        _dense_in_the_border)),
    PathMutant("nhwc_uint8_compared_as_int8",
               "the NHWC 8-bit kernel compares uint8 as int8",
               _on_path(lambda c: c.is_pool(*CHANNELS_LAST_DOMAINS) and c.x.dtype == np.uint8,
                        lambda c: c.through(np.int8))),
    PathMutant("openvino_int32_through_float32_multichannel",
               "OpenVINO-style: int32 with more than one channel is pooled through float32",
               _on_path(lambda c: c.is_pool(OPENVINO_DOMAIN) and c.x.dtype == np.int32 and c.x.shape[1] > 1,
                        lambda c: c.through(np.float32))),
    PathMutant("openvino_int64_through_float64",
               "int64 is pooled through float64, losing integers above 2^53",
               _on_path(lambda c: c.is_pool(OPENVINO_DOMAIN) and c.x.dtype == np.int64,
                        lambda c: c.through(np.float64))),
    PathMutant("int8_2d_values_seeded_minus_127",
               "the 2-D int8 values kernel seeds its maximum with -127, so a window of -128 gives -127",
               _on_path(lambda c: c.is_pool() and c.rank == 2 and not c.wants_indices and c.x.dtype == np.int8,
                        _map_y(_lowest_seed(-127)))),
    PathMutant("activation_skips_channel_remainder",
               "the fused activation is applied to whole 8-channel tiles only: the last C % 8 channels stay unclamped",
               _on_path(lambda c: c.is_pool(*CHANNELS_LAST_DOMAINS) and "activation" in c.attrs
                        and c.channels > 8 and c.channels % 8 != 0, _without_activation)),
    PathMutant("same_lower_3d_as_upper",
               "in 3-D, SAME_LOWER puts the odd pad at the end, as SAME_UPPER does",
               _on_path(lambda c: c.is_pool() and c.rank == 3 and c.attrs.get("auto_pad") == b"SAME_LOWER",
                        _attributes(_swap_same))),
    PathMutant("ceil_mode_written_out_read_as_set",
               "ceil_mode is tested for presence, not value: ceil_mode 0 written out rounds up",
               _on_path(lambda c: c.is_pool() and _has(c, "ceil_mode"), _attributes(_ceil_present))),
    PathMutant("storage_order_written_out_read_as_set",
               "storage_order is tested for presence: storage_order 0 written out gives column-major Indices",
               _on_path(lambda c: c.is_pool() and c.wants_indices and _has(c, "storage_order"),
                        _attributes(_storage_order_present))),
    PathMutant("auto_pad_notset_written_out_drops_pads",
               "auto_pad NOTSET written out takes the auto_pad branch, which drops the explicit pads",
               _on_path(lambda c: c.is_pool() and c.attrs.get("auto_pad") == b"NOTSET" and any(_pads(c)),
                        _attributes(_notset_drops_pads))),
    PathMutant("ceil_ignored_with_begin_pads",
               "ceil_mode is ignored when an axis has a begin pad",
               _on_path(lambda c: c.is_pool() and c.attrs.get("ceil_mode", 0) == 1
                        and any(_pads(c)[: len(_pads(c)) // 2]), _attributes(_floor_with_begin_pads))),
    PathMutant("openvino_negative_axis_by_spatial_rank",
               "OpenVINO's negative axis is normalised by the spatial rank instead of the input rank",
               _on_path(lambda c: c.is_pool(OPENVINO_DOMAIN) and c.wants_indices and c.attrs.get("axis", 0) < 0,
                        _attributes(_openvino_axis_by_spatial_rank))),
    PathMutant("openvino_ceil_ignored_when_dilated",
               "OpenVINO's rounding_type ceil is ignored when a dilation is > 1",
               _on_path(lambda c: c.is_pool(OPENVINO_DOMAIN) and c.attrs.get("rounding_type") == b"ceil"
                        and any(d > 1 for d in c.attrs.get("dilations", [1])), _attributes(_openvino_floor))),
    PathMutant("unpool_1d_output_shape_ignored",
               "1-D MaxUnpool ignores its output_shape input",
               _on_path(lambda c: c.node.op_type == "MaxUnpool" and c.rank == 1 and len(c.node.input) > 2
                        and bool(c.node.input[2]), _unpool_without_output_shape)),
    PathMutant("unpool_3d_default_shape_without_last_end_pad",
               "3-D MaxUnpool's default shape leaves out the last axis' end pad",
               _on_path(lambda c: c.node.op_type == "MaxUnpool" and c.rank == 3 and len(c.node.input) < 3
                        and any(_pads(c)), _unpool_last_end_pad_ignored)),
]

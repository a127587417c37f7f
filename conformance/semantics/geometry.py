"""Pooling window geometry along each spatial axis, for any spatial rank, ai.onnx's and OpenVINO's.

Output sizes follow the documents' formulas. Where the documents leave something open, the
result depends on ``readings`` (see :mod:`.readings`); by default:

* ceil_mode drops a last window that would start in the end padding
  (``ceil-window-starts-in-padding``);
* VALID and SAME_* use their own formulas, which do not depend on ceil_mode
  (``auto-pad-with-ceil-mode``);
* a negative SAME pad total (stride larger than the kernel extent) is clamped to 0
  (``same-pad-negative``; its other readings split it with each integer-rounding convention);
* SAME gives ceil(size / stride) outputs (``same-description-vs-formula``);
* a formula that gives a negative output size makes the model invalid (``negative-output-size``);
  a negative numerator is otherwise divided with floor or ceil as printed, never truncated;
* ``auto_pad=""`` is not one of the four values the documents allow (``auto-pad-empty-string``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor
from typing import Any, Mapping, Sequence

from .readings import DEFAULT, REJECTED, Readings

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
OPENVINO_AUTO_PADS = ("explicit", "valid", "same_upper", "same_lower")
OPENVINO_DOMAIN = "org.openvinotoolkit"


def openvino_rounding_types(version: int) -> tuple[str, ...]:
    """rounding_type's values: MaxPool-14 adds ceil_torch (max-pool-14.rst, "Rounding type")."""
    return ("floor", "ceil", "ceil_torch") if version >= 14 else ("floor", "ceil")


class GeometryError(ValueError):
    """The attributes and the input shape do not describe a valid pooling (under these readings)."""


@dataclass(frozen=True)
class Axis:
    """One spatial axis: window j of output o reads input position o*stride - pad_begin + j*dilation."""

    size: int
    kernel: int
    stride: int
    dilation: int
    pad_begin: int
    pad_end: int
    out: int

    @property
    def extent(self) -> int:
        return (self.kernel - 1) * self.dilation + 1

    def start(self, o: int) -> int:
        return o * self.stride - self.pad_begin

    def positions(self, o: int) -> list[int]:
        return [self.start(o) + j * self.dilation for j in range(self.kernel)]

    def holds_an_element(self, o: int) -> bool:
        return any(0 <= p < self.size for p in self.positions(o))

    @property
    def end_overhang(self) -> int:
        """Positions past ``pad_end`` that the last window reaches (ceil_mode)."""
        if self.out == 0:
            return 0
        needed = (self.out - 1) * self.stride + self.extent
        return max(0, needed - (self.pad_begin + self.size + self.pad_end))


def has_empty_window(axes: Sequence[Axis]) -> bool:
    """Whether some window holds no input element (it lies wholly in padding, or past the input)."""
    return any(not a.holds_an_element(o) for a in axes for o in range(a.out))


def pool_axes(
    spatial_shape: Sequence[int],
    kernel_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    readings: Readings = DEFAULT,
) -> tuple[Axis, ...]:
    """ai.onnx MaxPool's axes (and those of ONNX Runtime's NHWC MaxPools, which share its text)."""
    rank = len(kernel_shape)
    if len(spatial_shape) != rank:
        raise GeometryError(
            f"kernel_shape has {rank} axes but the input has {len(spatial_shape)} spatial axes"
        )
    strides = list(strides) if strides else [1] * rank
    dilations = list(dilations) if dilations else [1] * rank
    explicit_pads = list(pads) if pads else [0] * (2 * rank)
    if len(strides) != rank or len(dilations) != rank or len(explicit_pads) != 2 * rank:
        raise GeometryError("strides, dilations and pads must match the kernel rank (pads twice)")
    if auto_pad == "" and readings["auto-pad-empty-string"] == "notset":
        auto_pad = "NOTSET"
    if pads and auto_pad in AUTO_PADS and readings["pads-with-auto-pad"] == "auto-pad-ignored":
        auto_pad = "NOTSET"  # the explicit pads win
    if auto_pad not in AUTO_PADS:
        raise GeometryError(f"auto_pad {auto_pad!r} is not one of {', '.join(AUTO_PADS)}")

    axes = [_onnx_axis(i, spatial_shape[i], kernel_shape[i], strides[i], dilations[i],
                       (explicit_pads[i], explicit_pads[i + rank]), auto_pad, ceil_mode, readings) for i in range(rank)]
    if readings["window-in-padding-only"] == REJECTED and has_empty_window(axes):
        raise GeometryError("a window holds padding only")
    return tuple(axes)


def _onnx_axis(i: int, size: int, k: int, s: int, d: int, explicit_pads: tuple[int, int], auto_pad: str,
               ceil_mode: int, readings: Readings) -> Axis:
    """Spatial axis ``i`` of an ai.onnx MaxPool: its pads and output size under ``auto_pad``."""
    if k < 1 or s < 1 or d < 1:
        raise GeometryError("kernel_shape, strides and dilations must be positive")
    extent = (k - 1) * d + 1
    if auto_pad == "NOTSET":
        begin, end = explicit_pads
        if begin < 0 or end < 0:
            raise GeometryError("pads must be non-negative")
        out = _explicit_size(size + begin + end - extent, s, ceil_mode)
        if (ceil_mode and out > 0 and (out - 1) * s >= size + begin
                and readings["ceil-window-starts-in-padding"] == "drop-window-starting-past-input"):
            out -= 1
    elif auto_pad == "VALID":
        begin = end = 0
        out = -(-(size - extent + 1) // s)
        if ceil_mode and readings["auto-pad-with-ceil-mode"] == "ceil-mode-applies":
            out = _explicit_size(size - extent, s, ceil_mode)
    else:
        begin, end, out = _onnx_same(i, size, s, extent, auto_pad == "SAME_UPPER", readings)
        if ceil_mode and readings["auto-pad-with-ceil-mode"] == "ceil-mode-applies":
            out = _explicit_size(size + begin + end - extent, s, ceil_mode)
    if out < 0:
        if readings["negative-output-size"] == REJECTED:
            raise GeometryError(
                f"spatial axis {i}: the kernel extent {extent} exceeds the padded input "
                f"({size} + pads); the output size would be {out}"
            )
        out = 0
    return Axis(size, k, s, d, begin, end, out)


def _explicit_size(span: int, stride: int, rounding_up: int) -> int:
    """floor or ceil of span / stride, plus 1."""
    return (-(-span // stride) if rounding_up else span // stride) + 1


def _onnx_same(axis: int, size: int, stride: int, extent: int, upper: bool, readings: Readings) -> tuple[int, int, int]:
    if readings["same-description-vs-formula"] == "same-as-input":
        return _split(size, (size - 1) * stride + extent - size, upper)
    out = -(-size // stride)
    total = (out - 1) * stride + extent - size
    if total >= 0:
        return _split(out, total, upper)
    reading = readings["same-pad-negative"]
    if reading == REJECTED:
        raise GeometryError(f"spatial axis {axis}: the SAME pad total {total} is negative")
    if reading == "clamp-to-zero":
        return _split(out, 0, upper)
    begin = _negative_pad_begin(total, upper, reading)
    return begin, total - begin, out


def _negative_pad_begin(total: int, upper: bool, reading: str) -> int:
    """The begin pad of a negative SAME total under each integer-rounding convention a runtime may
    split it with (only the begin pad moves the windows: the output size is fixed)."""
    truncated_half = -(-total // 2)  # C++ division truncates towards zero: -3 / 2 = -1
    if reading == "negative-split-floor":  # Python's //: total // 2 at the beginning (upper), the rest (lower)
        return total // 2 if upper else total - total // 2
    if reading == "negative-split-lower-plus-one" and not upper:  # (total + 1) / 2, truncated
        return -(-(total + 1) // 2)
    return truncated_half if upper else total - truncated_half


def _split(out: int, total: int, upper: bool) -> tuple[int, int, int]:
    """(pad_begin, pad_end, out): the odd element of the total at the end (upper) or the beginning."""
    small, large = total // 2, total - total // 2
    return (small, large, out) if upper else (large, small, out)


def unpool_shape(
    pooled_shape: Sequence[int],
    kernel_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    readings: Readings = DEFAULT,
) -> tuple[int, ...]:
    """The default MaxUnpool output shape: MaxPool's floor formula solved for the input size
    (``negative-output-size`` where it is negative, as for an X with an axis of size 0)."""
    rank = len(kernel_shape)
    if len(pooled_shape) != rank + 2:
        raise GeometryError(
            f"kernel_shape has {rank} axes but the input has {len(pooled_shape) - 2} spatial axes"
        )
    strides = list(strides) if strides else [1] * rank
    pads = list(pads) if pads else [0] * (2 * rank)
    if len(strides) != rank or len(pads) != 2 * rank:
        raise GeometryError("strides and pads must match the kernel rank (pads twice)")
    shape = list(pooled_shape[:2])
    for i in range(rank):
        size = (pooled_shape[i + 2] - 1) * strides[i] + kernel_shape[i] - pads[i] - pads[i + rank]
        if size < 0:
            if readings["negative-output-size"] == REJECTED:
                raise GeometryError(f"spatial axis {i}: the default output size would be {size}")
            size = 0
        shape.append(size)
    return tuple(shape)


def openvino_axes(
    spatial_shape: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int] | None = None,
    auto_pad: str = "explicit",
    rounding_type: str = "floor",
    readings: Readings = DEFAULT,
) -> tuple[Axis, ...]:
    """OpenVINO MaxPool-1, -8 and -14 geometry (001_..., 004_... in ../shared/seeds; MaxPool-14 from
    OpenVINO's max-pool-14.rst and pooling_shape_rules.rst), which differs from ONNX's where the
    registry says so:

    * explicit: (size + pads - extent) / stride + 1, floored or ceiled, and no window is dropped,
      even one that starts in the end padding (``openvino-window-without-element``);
    * valid: no padding, but rounding_type applies: ceil keeps a partial last window, as
      MaxPool-8's example 5 shows (``openvino-valid-ceil``);
    * same_upper / same_lower: by default ceil(size / stride) outputs, the pad total including
      dilation, the odd element at the end (upper) or the beginning (lower)
      (``openvino-same-output-size``);
    * pads_begin and pads_end count only when auto_pad is explicit;
    * ceil_torch (MaxPool-14) rounds up as ceil does, then drops a last window that would start
      in the end padding: "the last pooling operation within a dimension cannot start in the
      padding area" (pooling_shape_rules.rst), after the pads that auto_pad gives;
    * a kernel extent beyond the padded input is refused, as OpenVINO's shape inference does
      (``openvino-kernel-exceeds-padded-input``).
    """
    rank = len(kernel)
    if len(spatial_shape) != rank:
        raise GeometryError(f"kernel has {rank} axes but the input has {len(spatial_shape)} spatial axes")
    dilations = list(dilations) if dilations else [1] * rank
    if not len(strides) == len(pads_begin) == len(pads_end) == len(dilations) == rank:
        raise GeometryError("strides, pads_begin, pads_end and dilations must have one value per kernel axis")
    if auto_pad not in OPENVINO_AUTO_PADS:
        raise GeometryError(f"auto_pad {auto_pad!r} is not one of {', '.join(OPENVINO_AUTO_PADS)}")
    return tuple(_openvino_axis(i, spatial_shape[i], kernel[i], strides[i], dilations[i], (pads_begin[i], pads_end[i]),
                                auto_pad, rounding_type, readings) for i in range(rank))


def _openvino_axis(i: int, size: int, k: int, s: int, d: int, pads: tuple[int, int], auto_pad: str,
                   rounding_type: str, readings: Readings) -> Axis:
    """Spatial axis ``i`` of an OpenVINO MaxPool: its pads and output size under ``auto_pad``."""
    zero_allowed = readings["openvino-zero-stride-or-dilation"] == "allowed"
    if k < 1 or s < 0 or d < 0 or not zero_allowed and (s < 1 or d < 1):
        raise GeometryError("kernel, strides and dilations must be positive")
    if s == 0:  # allowed by the documents' range, and yet the output size formulas divide by it
        raise GeometryError(f"spatial axis {i}: a stride of 0; the documents' output size divides by it")
    extent = (k - 1) * d + 1
    if auto_pad.startswith("same"):
        begin, end, out = _openvino_same(size, s, extent, auto_pad == "same_upper", rounding_type, readings)
    else:
        begin, end = pads if auto_pad == "explicit" else (0, 0)
        if begin < 0 or end < 0:
            raise GeometryError("pads_begin and pads_end must be non-negative")
        span = size + begin + end - extent
        if span < 0 and readings["openvino-kernel-exceeds-padded-input"] == REJECTED:
            raise GeometryError(f"spatial axis {i}: the kernel extent {extent} exceeds the padded input")
        out = _explicit_size(span, s, rounding_type != "floor")
        if auto_pad == "valid" and readings["openvino-valid-ceil"] == "valid-formula":
            out = -(-(size - extent + 1) // s)
        if readings["openvino-1-formula-parentheses"] == "as-printed":  # only the kernel divided
            value = size + begin + end - Fraction(k, s)
            out = (ceil(value) if rounding_type == "ceil" else floor(value)) + 1
        if out < 0:
            raise GeometryError(f"spatial axis {i}: the output size would be {out}")
    if rounding_type == "ceil_torch" and out > 0 and (out - 1) * s >= size + begin:
        out -= 1  # MaxPool-14: the last window may not start in the end padding, as in PyTorch
    return Axis(size, k, s, d, begin, end, out)


def _openvino_same(size: int, stride: int, extent: int, upper: bool, rounding_type: str,
                   readings: Readings) -> tuple[int, int, int]:
    reading = readings["openvino-same-output-size"]
    if reading == "input-size":
        return _split(size, (size - 1) * stride + extent - size, upper)
    out = -(-size // stride)
    begin, end, out = _split(out, max(0, (out - 1) * stride + extent - size), upper)
    if reading == "rounding-after-same-pads":  # the explicit formula over the SAME pads
        out = _explicit_size(size + begin + end - extent, stride, rounding_type != "floor")
    return begin, end, out


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def node_axes(domain: str, attributes: Mapping[str, Any], spatial_shape: Sequence[int],
              readings: Readings = DEFAULT) -> tuple[Axis, ...]:
    """The axes of a MaxPool node of ``domain`` from its attributes (strings or bytes), for an input
    whose spatial shape (channels-first) is ``spatial_shape``."""
    a = {name: _text(value) for name, value in attributes.items()}
    if domain == OPENVINO_DOMAIN:
        return openvino_axes(spatial_shape, a["kernel"], a["strides"], a["pads_begin"], a["pads_end"],
                             a.get("dilations"), a.get("auto_pad", "explicit"), a.get("rounding_type", "floor"),
                             readings)
    return pool_axes(spatial_shape, a["kernel_shape"], a.get("strides"), a.get("pads"), a.get("dilations"),
                     a.get("auto_pad", "NOTSET"), a.get("ceil_mode", 0), readings)

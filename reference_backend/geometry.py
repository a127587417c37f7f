"""Pooling window geometry along each spatial axis, for any spatial rank.

Output sizes follow the formulas of the ONNX MaxPool documents (1-22). Where the documents leave
something open, the choice made here is named in ``cases/ambiguities.yaml``:

* ceil_mode drops a last window that would start in the end padding
  (``ceil-window-starts-in-padding``);
* VALID and SAME_* use their own formulas, which do not depend on ceil_mode
  (``auto-pad-with-ceil-mode``);
* a negative SAME pad total (stride larger than the kernel extent) is clamped to 0
  (``same-pad-negative``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


class GeometryError(ValueError):
    """The attributes and the input shape do not describe a valid pooling."""


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

    @property
    def end_overhang(self) -> int:
        """Positions past ``pad_end`` that the last window reaches (ceil_mode)."""
        if self.out == 0:
            return 0
        needed = (self.out - 1) * self.stride + self.extent
        return max(0, needed - (self.pad_begin + self.size + self.pad_end))


def pool_axes(
    spatial_shape: Sequence[int],
    kernel_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
) -> tuple[Axis, ...]:
    rank = len(kernel_shape)
    if len(spatial_shape) != rank:
        raise GeometryError(
            f"kernel_shape has {rank} axes but the input has {len(spatial_shape)} spatial axes"
        )
    strides = list(strides) if strides else [1] * rank
    dilations = list(dilations) if dilations else [1] * rank
    pads = list(pads) if pads else [0] * (2 * rank)
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise GeometryError("strides, dilations and pads must match the kernel rank (pads twice)")
    if auto_pad not in AUTO_PADS:
        raise GeometryError(f"auto_pad {auto_pad!r} is not one of {', '.join(AUTO_PADS)}")

    axes = []
    for i in range(rank):
        size, k, s, d = spatial_shape[i], kernel_shape[i], strides[i], dilations[i]
        if k < 1 or s < 1 or d < 1:
            raise GeometryError("kernel_shape, strides and dilations must be positive")
        extent = (k - 1) * d + 1
        if auto_pad == "NOTSET":
            begin, end = pads[i], pads[i + rank]
            if begin < 0 or end < 0:
                raise GeometryError("pads must be non-negative")
            span = size + begin + end - extent
            if ceil_mode:
                out = -(-span // s) + 1
                if out > 0 and (out - 1) * s >= size + begin:
                    out -= 1
            else:
                out = span // s + 1
        elif auto_pad == "VALID":
            begin = end = 0
            out = -(-(size - extent + 1) // s)
        else:
            begin, end, out = _same_padding(size, s, extent, upper=auto_pad == "SAME_UPPER")
        if out < 0:
            raise GeometryError(
                f"spatial axis {i}: the kernel extent {extent} exceeds the padded input "
                f"({size} + pads); the output size would be {out}"
            )
        axes.append(Axis(size, k, s, d, begin, end, out))
    return tuple(axes)


def _same_padding(size: int, stride: int, extent: int, upper: bool) -> tuple[int, int, int]:
    """(pad_begin, pad_end, out) of SAME padding, in ONNX and OpenVINO alike: ceil(size / stride)
    outputs, the pad total of the dilated extent, its odd element at the end (upper) or the
    beginning (lower); never negative (``same-pad-negative``)."""
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + extent - size)
    small, large = total // 2, total - total // 2
    return (small, large, out) if upper else (large, small, out)


def unpool_shape(
    pooled_shape: Sequence[int],
    kernel_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """The default MaxUnpool output shape: MaxPool's floor formula solved for the input size."""
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
            raise GeometryError(f"spatial axis {i}: the default output size would be {size}")
        shape.append(size)
    return tuple(shape)


OPENVINO_AUTO_PADS = ("explicit", "valid", "same_upper", "same_lower")


def openvino_axes(
    spatial_shape: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int] | None = None,
    auto_pad: str = "explicit",
    rounding_type: str = "floor",
) -> tuple[Axis, ...]:
    """OpenVINO MaxPool-1 and -8 geometry (001_..., 004_... in ../shared/seeds), which differs from
    ONNX's where the registry says so:

    * explicit: (size + pads - extent) / stride + 1, floored or ceiled, and no window is dropped,
      even one that starts in the end padding (``openvino-window-without-element``);
    * valid: no padding, but rounding_type applies: ceil keeps a partial last window, as
      MaxPool-8's example 5 shows (``openvino-valid-ceil``);
    * same_upper / same_lower: ceil(size / stride) outputs, the pad total including dilation,
      the odd element at the end (upper) or the beginning (lower); rounding_type does not apply
      (``openvino-same-output-size``);
    * pads_begin and pads_end count only when auto_pad is explicit.
    """
    rank = len(kernel)
    if len(spatial_shape) != rank:
        raise GeometryError(f"kernel has {rank} axes but the input has {len(spatial_shape)} spatial axes")
    dilations = list(dilations) if dilations else [1] * rank
    if not len(strides) == len(pads_begin) == len(pads_end) == len(dilations) == rank:
        raise GeometryError("strides, pads_begin, pads_end and dilations must have one value per kernel axis")
    if auto_pad not in OPENVINO_AUTO_PADS:
        raise GeometryError(f"auto_pad {auto_pad!r} is not one of {', '.join(OPENVINO_AUTO_PADS)}")
    axes = []
    for i in range(rank):
        size, k, s, d = spatial_shape[i], kernel[i], strides[i], dilations[i]
        if k < 1 or s < 1 or d < 1:
            raise GeometryError("kernel, strides and dilations must be positive")
        extent = (k - 1) * d + 1
        if auto_pad.startswith("same"):
            begin, end, out = _same_padding(size, s, extent, upper=auto_pad == "same_upper")
        else:
            begin, end = (pads_begin[i], pads_end[i]) if auto_pad == "explicit" else (0, 0)
            if begin < 0 or end < 0:
                raise GeometryError("pads_begin and pads_end must be non-negative")
            span = size + begin + end - extent
            if span < 0:
                raise GeometryError(f"spatial axis {i}: the kernel extent {extent} exceeds the padded input")
            out = (-(-span // s) if rounding_type == "ceil" else span // s) + 1
        axes.append(Axis(size, k, s, d, begin, end, out))
    return tuple(axes)

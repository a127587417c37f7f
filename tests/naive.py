"""A deliberately naive MaxPool/MaxUnpool: nested loops over every output and window element.

It shares no code with reference_backend. Output sizes and SAME pads are the documents' formulas
written out with real division and math.floor/ceil, as printed; the windows are enumerated one
element at a time. It follows the same documented choices as the reference where the documents
are open (see cases/ambiguities.yaml): ceil_mode drops a window starting past the input, ties keep
the first maximum in row-major window order, NaN propagates, and an all-padding window gives
-inf / the integer minimum with index -1.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


class NaiveError(ValueError):
    pass


def output_geometry(size, kernel, stride, dilation, pad_begin, pad_end, auto_pad, ceil_mode):
    """(output size, begin pad) of one axis, by the formulas of MaxPool-10..22."""
    effective = (kernel - 1) * dilation + 1
    if auto_pad == "VALID":
        return math.ceil((size - effective + 1) / stride), 0
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = math.ceil(size / stride)
        pad = max(0, (out - 1) * stride + effective - size)
        begin = math.floor(pad / 2) if auto_pad == "SAME_UPPER" else math.ceil(pad / 2)
        return out, begin
    total = size + pad_begin + pad_end - effective
    if ceil_mode:
        out = math.ceil(total / stride + 1)
        if (out - 1) * stride >= size + pad_begin:  # the last window would start past the input
            out -= 1
    else:
        out = math.floor(total / stride + 1)
    return out, pad_begin


def naive_max_pool(x, kernel_shape, strides=None, pads=None, dilations=None,
                   auto_pad="NOTSET", ceil_mode=0, storage_order=0):
    rank = len(kernel_shape)
    strides = strides or [1] * rank
    dilations = dilations or [1] * rank
    pads = pads or [0] * (2 * rank)
    n_batch, n_channel = x.shape[:2]
    spatial = x.shape[2:]
    outs, begins = [], []
    for i in range(rank):
        out, begin = output_geometry(spatial[i], kernel_shape[i], strides[i], dilations[i],
                                     pads[i], pads[i + rank], auto_pad, ceil_mode)
        if out < 0:
            raise NaiveError(f"negative output size on axis {i}")
        outs.append(out)
        begins.append(begin)

    y = np.zeros([n_batch, n_channel] + outs, dtype=x.dtype)
    indices = np.zeros([n_batch, n_channel] + outs, dtype=np.int64)
    plane = 1
    for extent in spatial:
        plane *= extent
    for n in range(n_batch):
        for c in range(n_channel):
            for o in itertools.product(*[range(v) for v in outs]):
                best, best_at = None, None
                for j in itertools.product(*[range(k) for k in kernel_shape]):
                    at = [o[i] * strides[i] - begins[i] + j[i] * dilations[i] for i in range(rank)]
                    if any(p < 0 or p >= spatial[i] for i, p in enumerate(at)):
                        continue
                    value = x[(n, c) + tuple(at)].item()  # exact: a Python int for integer types
                    if (best_at is None or value > best
                            or (math.isnan(value) and not math.isnan(best))):
                        best, best_at = value, at
                if best_at is None:
                    fill = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
                    y[(n, c) + o] = fill
                    indices[(n, c) + o] = -1
                    continue
                y[(n, c) + o] = x[(n, c) + tuple(best_at)]
                if storage_order == 0:
                    within = 0
                    for i in range(rank):
                        within = within * spatial[i] + best_at[i]
                else:
                    within, step = 0, 1
                    for i in range(rank):
                        within += best_at[i] * step
                        step *= spatial[i]
                indices[(n, c) + o] = (n * n_channel + c) * plane + within
    return y, indices


def naive_max_unpool(x, indices, kernel_shape, strides=None, pads=None, output_shape=None):
    rank = len(kernel_shape)
    strides = strides or [1] * rank
    pads = pads or [0] * (2 * rank)
    if output_shape is None:
        output_shape = list(x.shape[:2]) + [
            (x.shape[2 + i] - 1) * strides[i] - pads[i] - pads[i + rank] + kernel_shape[i]
            for i in range(rank)
        ]
    y = np.zeros(output_shape, dtype=x.dtype)
    flat = y.reshape(-1)
    for position in itertools.product(*[range(v) for v in x.shape]):
        target = int(indices[position])
        if not 0 <= target < flat.size:
            raise NaiveError(f"index {target} out of range")
        flat[target] = x[position]
    return y


def naive_activation(y, low, high):
    """The clamp of ONNX Runtime's fused activation, one element at a time: a value below ``low``
    becomes ``low`` (the smallest integer at or above it, for an integer Y), one above ``high``
    becomes ``high``; NaN and -0.0 stay as they are."""
    out = y.copy()
    integer = np.issubdtype(y.dtype, np.integer)
    for position in itertools.product(*[range(v) for v in y.shape]):
        value = float(y[position])
        if value < low:
            out[position] = math.ceil(low) if integer else low
        elif value > high:
            out[position] = math.floor(high) if integer else high
    return out


def naive_openvino_max_pool(x, kernel, strides, pads_begin, pads_end, dilations=None, auto_pad="explicit",
                            rounding_type="floor", axis=0, index_element_type="i64"):
    """OpenVINO MaxPool-1/-8 as its documents define it (001_..., 004_...), with the readings the
    registry names: the formulas parenthesised as MaxPool-8 prints them, rounding_type applying to
    valid as the examples show, same_* giving ceil(size / stride), no window dropped."""
    rank = len(kernel)
    dilations = dilations or [1] * rank
    spatial = x.shape[2:]
    outs, begins = [], []
    for i in range(rank):
        effective = (kernel[i] - 1) * dilations[i] + 1
        if auto_pad in ("same_upper", "same_lower"):
            out = math.ceil(spatial[i] / strides[i])
            pad = max(0, (out - 1) * strides[i] + effective - spatial[i])
            begin = math.floor(pad / 2) if auto_pad == "same_upper" else math.ceil(pad / 2)
        else:
            begin, end = (pads_begin[i], pads_end[i]) if auto_pad == "explicit" else (0, 0)
            share = (spatial[i] + begin + end - effective) / strides[i]
            out = (math.ceil(share) if rounding_type == "ceil" else math.floor(share)) + 1
        outs.append(out)
        begins.append(begin)
    y = np.zeros(list(x.shape[:2]) + outs, dtype=x.dtype)
    indices = np.zeros(list(x.shape[:2]) + outs, dtype=np.int64)
    bound = 1
    for extent in x.shape[axis % x.ndim:]:
        bound *= extent
    plane = 1
    for extent in spatial:
        plane *= extent
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for o in itertools.product(*[range(v) for v in outs]):
                best, best_at = None, None
                for j in itertools.product(*[range(k) for k in kernel]):
                    at = [o[i] * strides[i] - begins[i] + j[i] * dilations[i] for i in range(rank)]
                    if any(p < 0 or p >= spatial[i] for i, p in enumerate(at)):
                        continue
                    value = x[(n, c) + tuple(at)].item()  # exact: a Python int for integer types
                    if best_at is None or value > best or (math.isnan(value) and not math.isnan(best)):
                        best, best_at = value, at
                if best_at is None:
                    y[(n, c) + o] = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
                    indices[(n, c) + o] = -1
                    continue
                y[(n, c) + o] = x[(n, c) + tuple(best_at)]
                within = 0
                for i in range(rank):
                    within = within * spatial[i] + best_at[i]
                indices[(n, c) + o] = ((n * x.shape[1] + c) * plane + within) % bound
    return y, indices.astype(np.int32 if index_element_type == "i32" else np.int64)


def naive_outputs(item, written):
    """The outputs of a suite item (``conformance.expand.items.Item``) by the naive loops, from its inputs
    as the case writes them (channels-first); Y in the operator's own layout, as the model gives it."""
    from conformance.expand.items import stored

    attrs = dict(item.case.attributes)
    count = len(item.outputs)
    if item.case.domain == "org.openvinotoolkit":
        return list(naive_openvino_max_pool(written["X"], **attrs))[:count]
    if item.case.op in ("MaxPool", "NhwcMaxPool"):
        activation, bounds = attrs.pop("activation", None), attrs.pop("activation_params", None)
        y, indices = naive_max_pool(written["X"], **attrs)
        if activation:
            y = naive_activation(y, *bounds)
        return [stored(y, item.layout), indices][:count]
    output_shape = written.get("output_shape")
    output_shape = None if output_shape is None else [int(d) for d in output_shape]
    if item.case.upstream:
        pooled, indices = naive_max_pool(written[item.inputs[0].name], **item.case.upstream.attributes)
    else:
        pooled, indices = written["X"], written["I"]
    return [naive_max_unpool(pooled, indices, output_shape=output_shape, **attrs)]

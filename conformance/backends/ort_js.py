"""ONNX Runtime's JavaScript builds, run by Node: ``ort-js[ep=cpu|webgpu|wasm]`` (default webgpu).

- ``ep=cpu``: ``onnxruntime-node``'s CPU execution provider (one intra-op thread);
- ``ep=webgpu``: the same package's WebGPU execution provider (Dawn on Vulkan; on a machine without
  a GPU, Chromium's SwiftShader). Its layout transformer turns ai.onnx MaxPool into Transpose ->
  com.ms.internal.nhwc MaxPool -> Transpose on WGSL kernels, so this is the NHWC operator on a real
  kernel;
- ``ep=wasm``: ``onnxruntime-web`` in Node, ORT's C++ kernels compiled to WebAssembly (one thread).

The npm packages live in a per-user cache that ``conformance setup ort-js`` fills (:mod:`.ort_js_setup`).
One Node process (``ort_js_server.cjs``) serves the backend for its life: model bytes and inputs go
to it framed over a pipe, outputs come back as element type, shape and bytes. Where the runtime
says it cannot (no kernel, an element type it lacks, an adapter without shader-f16) the item is
``unsupported`` with its words; any other refusal is an error. When the server dies inside the
isolated child, the child dies with it, so the item is a ``crash``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from .isolation import child, wire
from .base import Capability, Unsupported, declared
from .ort_js_setup import EPS, ICD, SERVER, environment, node_modules, package_json, problems

# Where ONNX Runtime's JavaScript builds say they cannot, rather than should not, run a model; any
# other refusal of a valid model is a bug. Beside a GPU provider, a node no provider has a kernel for
# fails the memcpy transformer's check ("Provider type ... is not set") where the CPU provider alone
# says "Could not find an implementation".
CAPABILITIES = (
    Capability(r"Could not find an implementation|Kernel not found", "onnxruntime/core/framework/kernel_registry.cc",
               "Could not find an implementation for MaxPool(1) node with name ''"),
    Capability(r"not supported yet|is not supported", "the WebGPU and WebAssembly providers' checks of what they "
               "implement", "Non-zero status code returned while running MaxPool node. Name:'_token_2' Status Message: "
               "pool.cc:276 ComputeInternal The Indices output is not supported yet."),
    Capability(r"requires f16 but the device does not support it", "the WebGPU provider (a device without shader-f16)",
               "Non-zero status code returned while running Transpose node. Name:'Transpose' Status Message: "
               "shader_helper.cc:416 GenerateSourceCode Program Transpose requires f16 but the device does not support "
               "it."),
    Capability(r"Unsupported data type", "onnxruntime-common's Tensor, or this adapter (an element type the "
               "JavaScript API has no tensor type for)",
               "Unsupported data type: bfloat16 (input 'X') has no tensor type in onnxruntime's JavaScript API"),
    Capability(r"Unsupported pooling size", "onnxruntime/core/providers/cpu/nn/pool.cc and unpool.cc (a rank their "
               "kernels have no loop for: four or more spatial axes)",
               "Non-zero status code returned while running MaxPool node. Name:'' Status Message: Unsupported pooling "
               "size."),
    Capability(r"is not a registered function/op", "onnxruntime/core/graph/graph.cc (a domain it has no schema for)",
               "Fatal error: org.openvinotoolkit:MaxPool(-1) is not a registered function/op"),
    Capability(r"Provider type for \S+ node with name '[^']*' is not set", "onnxruntime/core/optimizer/"
               "transformer_memcpy.cc", "Exception during initialization: /onnxruntime_src/onnxruntime/core/optimizer/"
               "transformer_memcpy.cc:253 bool onnxruntime::TransformerMemcpyImpl::IsNodeCompatibleWithProvider(const "
               "onnxruntime::Node&) const Provider type for MaxPool node with name '' is not set"),
)
DTYPES = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int8": "|i1", "uint8": "|u1", "int16": "<i2",
          "uint16": "<u2", "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "bool": "|b1"}
NAMES = {text: name for name, text in DTYPES.items()}
# Without the trap handler WebAssembly memories reserve no guard regions of many GiB, which the
# isolated child's address-space limit (8 GiB by default) refuses; a 1 GiB ceiling keeps the
# reservation of ORT's 4 GiB memory small. --disable-wasm-trap-handler needs Node >= 20.15.
WASM_FLAGS = ["--disable-wasm-trap-handler", "--wasm-max-mem-pages=16384"]


class ServerDied(Exception):
    """The Node process exited or was killed while it held an item."""


class OrtJsBackend:
    title = "ONNX Runtime for Node.js"
    choices = "ep=" + "|".join(EPS)

    def __init__(self, ep: str = "webgpu"):
        self.server: Any = None  # the Node server's subprocess.Popen, once started
        if ep not in EPS:
            raise ValueError(f"ep={ep!r}: use one of {', '.join(EPS)}")
        missing = problems(ep)
        if missing:
            raise ImportError(f"ort-js[ep={ep}] cannot run here: {'; '.join(missing)}")
        self.ep = ep
        self.name = f"ort-js[ep={ep}]"
        package = "onnxruntime-web" if ep == "wasm" else "onnxruntime-node"
        self.version = str(package_json(package).get("version"))

    def details(self) -> dict[str, str]:
        shown = {"execution_provider": self.ep, "package": "onnxruntime-web (wasm, 1 thread)" if self.ep == "wasm"
                 else "onnxruntime-node" + (" (1 intra-op thread)" if self.ep == "cpu" else ""),
                 "node": _node_version()}
        if self.ep == "webgpu":
            shown["adapter"] = adapter_name()
        return shown

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        if self.server is None or self.server.poll() is not None:
            self._start()
        names = [vi.name for vi in model.graph.input if vi.name in inputs]
        arrays = [np.ascontiguousarray(inputs[n]) for n in names]
        for name, array in zip(names, arrays):
            if array.dtype.str not in NAMES:
                raise Unsupported(f"Unsupported data type: {array.dtype} (input {name!r}) has no tensor type "
                                  "in onnxruntime's JavaScript API")
        header = {"inputs": [{"name": n, "dtype": NAMES[a.dtype.str], "shape": list(a.shape)}
                             for n, a in zip(names, arrays)]}
        data = [a.reshape(-1).view(np.uint8) for a in arrays]
        answer, buffers = self._exchange(header, [model.SerializeToString(), *data])
        if answer.get("kind") == "error":
            message = str(answer.get("message"))
            if declared(message, CAPABILITIES):
                raise Unsupported(message)
            raise RuntimeError(message)
        by_name = {o["name"]: np.frombuffer(bytearray(b), DTYPES[o["dtype"]]).reshape(o["shape"])
                   for o, b in zip(answer["outputs"], buffers)}
        return [by_name[vi.name] for vi in model.graph.output if vi.name in by_name]

    def close(self) -> None:
        if self.server is not None:
            self.server.kill()
            self.server.wait()
            for fd in self.fds:
                os.close(fd)
            self.server = None

    __del__ = close

    def _start(self) -> None:
        self.close()
        requests, answers = os.pipe(), os.pipe()
        self.server = subprocess.Popen(
            ["node", *(WASM_FLAGS if self.ep == "wasm" else []), str(SERVER), str(node_modules()), self.ep,
             str(requests[0]), str(answers[1])],
            stdin=subprocess.DEVNULL, pass_fds=(requests[0], answers[1]), env=environment(self.ep))
        os.close(requests[0])
        os.close(answers[1])
        self.fds = [requests[1], answers[0]]
        answer, _ = self._exchange({"pin": True}, [pin_model().SerializeToString()])
        if answer.get("kind") != "ready":
            self.close()
            raise RuntimeError(f"the ort-js server did not start: {answer.get('message')}")

    def _exchange(self, header: dict[str, Any], buffers: list) -> tuple[dict, list[memoryview]]:
        frame = wire.frame(header, buffers)
        try:
            for chunk in frame:
                _write_all(self.fds[0], chunk)
            answer = wire.read_frame(self.fds[1])
        except (BrokenPipeError, ConnectionResetError):
            answer = None
        except (ValueError, KeyError, TypeError):  # a truncated or garbled answer
            if self.server.poll() is None:
                self.close()
                raise RuntimeError("the ort-js Node server wrote an unreadable answer") from None
            answer = None
        if answer is None:
            self._died()
        return answer

    def _died(self) -> NoReturn:
        code = self.server.wait()
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        self.close()
        message = f"the ort-js Node server {how} while it held the item"
        if child.IN_CHILD:  # the item is a crash: this process goes the way its server went
            print(f"conformance: {message}", file=sys.stderr, flush=True)
            os._exit(70)
        raise ServerDied(message)


def _write_all(fd: int, chunk) -> None:
    view = memoryview(chunk).cast("B")
    while view:
        view = view[os.write(fd, view):]


def pin_model() -> onnx.ModelProto:
    """A one-element Relu: the session the server keeps open for its life."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "pin",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7)


def adapter_name() -> str:
    """The Vulkan device Dawn will find: vulkaninfo's deviceName where it is installed, else the ICD's library."""
    try:
        summary = subprocess.run(["vulkaninfo", "--summary"], capture_output=True, text=True, timeout=30,
                                 env=environment("webgpu")).stdout
        found = re.search(r"deviceName\s*=\s*(.+)", summary)
        if found:
            return found.group(1).strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        library = json.loads(Path(ICD).read_text())["ICD"]["library_path"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"unknown (no readable {ICD})"
    return f"SwiftShader ({Path(library).name}, from {ICD})" if "swiftshader" in library else library


def _node_version() -> str:
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"

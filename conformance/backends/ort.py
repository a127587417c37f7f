"""ONNX Runtime. Options, given as ``ort[optimization=disabled,threads=1]``:

- ``providers``: execution providers, ``;``-separated (default ``CPUExecutionProvider``);
- ``optimization``: graph optimization level, ``disabled``, ``basic``, ``extended``, ``layout``
  or ``all`` (ONNX Runtime's default; at ``all`` a float32 4-D MaxPool whose channel count is a
  multiple of 8 or 16 runs on the NCHWc kernels instead);
- ``threads``: intra-op thread count (0: ONNX Runtime's choice);
- ``<Provider>.<option>``: an option of one of the providers, e.g.
  ``CUDAExecutionProvider.prefer_nhwc=1``, which makes the CUDA provider claim the NHWC operators
  (com.ms.internal.nhwc) that a stock CPU build has no kernel for.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx

from .base import Capability, Unsupported, declared, import_extra

# How ONNX Runtime and its execution providers word "this build cannot run that" outside the
# NOT_IMPLEMENTED status (always a declared refusal); any other refusal of a valid model is a bug.
CAPABILITIES = (
    Capability(r"is not a registered function/op", "onnxruntime/core/graph/graph.cc (a domain it has no schema for)",
               "[ONNXRuntimeError] : 1 : FAIL : Fatal error: org.openvinotoolkit:MaxPool(-1) is not a registered "
               "function/op"),
    Capability(r"Unsupported model IR version: \d+, max supported IR version", "onnxruntime/core/graph/model.cc "
               "(a release older than the model's IR version)",
               "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: /onnxruntime_src/"
               "onnxruntime/core/graph/model.cc:149 onnxruntime::Model::Model(...) Unsupported model IR version: 10, "
               "max supported IR version: 9"),
    Capability(r"ONNX Runtime only \*guarantees\* support for models stamped with official released onnx opset",
               "onnxruntime/core/graph/model_load_utils.h, ValidateOpsetForDomain (an opset newer than the release)",
               "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: ... ONNX Runtime only "
               "*guarantees* support for models stamped with official released onnx opset versions. Opset 22 is under "
               "development and support for this is limited."),
    Capability(r"Unsupported pooling size", "onnxruntime/core/providers/cpu/nn/pool.cc and unpool.cc (a rank their "
               "kernels have no loop for: four or more spatial axes)",
               "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running MaxPool node. "
               "Name:'' Status Message: Unsupported pooling size."),
    # the OpenVINO EP hands the model to OpenVINO's ONNX frontend, whose refusals are these
    # (src/frontends/onnx/frontend/src/core/graph.cpp; OpenVINO 2023 and later: "No conversion rule")
    Capability(r"does not support the following ONNX operations", "OpenVINO's ONNX frontend, through the OpenVINO EP",
               "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Exception during initialization: [OpenVINO-EP]  Exception "
               "while Reading network: Exception from src/frontends/onnx/frontend/src/core/graph.cpp:238:\nOpenVINO "
               "does not support the following ONNX operations: com.ms.internal.nhwc.MaxPool"),
    Capability(r"No conversion rule found for operations", "OpenVINO's ONNX frontend (2023 and later), through the "
               "OpenVINO EP", "[ONNXRuntimeError] : 11 : EP_FAIL : [OpenVINO-EP] No conversion rule found for "
               "operations: com.microsoft.NhwcMaxPool"),
    Capability(r"Unsupported operation of type", "OpenVINO's ONNX frontend, through the OpenVINO EP",
               "Unsupported operation of type: MaxPool name: MaxPool"),
    # any EP with session.disable_cpu_ep_fallback=1: a node it does not claim would need the CPU EP
    Capability(r"fallback to CPU EP has been explicitly disabled", "onnxruntime/core/session/inference_session.cc",
               "[ONNXRuntimeError] : 1 : FAIL : This session contains graph nodes that are assigned to the default CPU "
               "EP, but fallback to CPU EP has been explicitly disabled by the user."),
)

LEVELS = {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED",
          "layout": "ORT_ENABLE_LAYOUT", "all": "ORT_ENABLE_ALL"}


class OrtBackend:
    title = "ONNX Runtime"  # the runtime as a report's sentences name it (optional; the name otherwise)
    def __init__(self, providers: str = "CPUExecutionProvider", optimization: str = "all", threads: str = "0",
                 **provider_options: str):
        (onnxruntime,) = import_extra("ort", "ort", "onnxruntime")
        if optimization not in LEVELS:
            raise ValueError(f"optimization={optimization!r}: use one of {', '.join(LEVELS)}")
        self.ort = onnxruntime
        self.version = onnxruntime.__version__
        self.providers = providers.split(";")
        missing = [p for p in self.providers if p not in onnxruntime.get_available_providers()]
        if missing:
            raise ValueError(f"providers {missing} are not in this onnxruntime build "
                             f"({', '.join(onnxruntime.get_available_providers())})")
        self.provider_options: list[dict[str, str]] = [{} for _ in self.providers]
        for key, value in provider_options.items():
            provider, dot, option = key.partition(".")
            if not dot or provider not in self.providers:
                raise ValueError(f"unknown option {key!r}: options are providers, optimization, threads and "
                                 "<Provider>.<option> for a provider in providers")
            self.provider_options[self.providers.index(provider)][option] = value
        self.options = onnxruntime.SessionOptions()
        self.options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, LEVELS[optimization])
        self.options.intra_op_num_threads = int(threads)
        # Refusals arrive as exceptions; ORT's own log lines would only repeat them.
        self.options.log_severity_level = 4
        # A session's pool threads wait without spinning: the same kernels split their work the
        # same way, but between two items (milliseconds apart) a spinning pool thread burns a
        # core that the suite's other processes need (a tenth of the whole ORT suite's CPU).
        self.options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        given = {"providers": providers, "optimization": optimization, "threads": threads, **provider_options}
        defaults = {"providers": "CPUExecutionProvider", "optimization": "all", "threads": "0"}
        changed = [f"{k}={v}" for k, v in given.items() if v != defaults.get(k)]
        self.name = f"ort[{','.join(changed)}]" if changed else "ort"

    def details(self) -> dict[str, str]:
        return {
            "providers": ",".join(self.providers),
            "graph_optimization_level": self.options.graph_optimization_level.name,
            "intra_op_num_threads": str(self.options.intra_op_num_threads),
            "intra_op_spinning": "off",
            **{f"{p}.{k}": v for p, options in zip(self.providers, self.provider_options) for k, v in options.items()},
        }

    def run(self, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Sequence[np.ndarray]:
        state = self.ort.capi.onnxruntime_pybind11_state
        try:
            session = self.ort.InferenceSession(
                model.SerializeToString(), sess_options=self.options, providers=self.providers,
                provider_options=self.provider_options,
            )
            return session.run(None, inputs)
        except state.NotImplemented as e:
            raise Unsupported(str(e)) from e
        except Exception as e:  # FAIL, RUNTIME_EXCEPTION, EP_FAIL...: some EPs' refusals arrive so
            if declared(str(e), CAPABILITIES):
                raise Unsupported(str(e)) from e
            raise

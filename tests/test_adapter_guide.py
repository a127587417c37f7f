"""What the adapter guide (docs/validate-your-runtime.md) promises about an onnx Backend adapter: the version comes from
its module's __version__, NotImplementedError from run() is `unsupported`, and an unknown domain
refused as the guide shows is `unsupported` too."""

from __future__ import annotations

import sys
import types

import numpy as np
from onnx import TensorProto

from conformance.backends import Unsupported, load_backend
from tests.test_reference_vs_naive import single_node_model

ADAPTER = '''
from onnx.backend.base import Backend, BackendRep

__version__ = "7.1.2"


class LazyRep(BackendRep):
    def run(self, inputs, **kwargs):
        raise NotImplementedError("no kernel for this element type (found when compiling)")


class LazyBackend(Backend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        if any(n.domain not in ("", "ai.onnx") for n in model.graph.node):
            raise NotImplementedError(f"unknown domain {model.graph.node[0].domain}")
        return LazyRep()
'''


def _adapter(monkeypatch):
    module = types.ModuleType("guide_adapter")
    exec(compile(ADAPTER, "guide_adapter.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "guide_adapter", module)
    return load_backend("guide_adapter:LazyBackend")


def test_the_version_is_the_adapter_module_s___version__(monkeypatch):
    assert _adapter(monkeypatch).version == "7.1.2"


def test_not_implemented_from_run_and_an_unknown_domain_are_unsupported(monkeypatch):
    backend = _adapter(monkeypatch)
    x = {"X": np.ones((1, 1, 2), np.float32)}
    for domain in ("", "com.ms.internal.nhwc"):
        model = single_node_model("MaxPool", 11, [("X", TensorProto.FLOAT)], [("Y", TensorProto.FLOAT)],
                                  domain=domain, kernel_shape=[2])
        try:
            backend.run(model, x)
        except Unsupported as e:
            assert ("unknown domain" in str(e)) == bool(domain)
        else:
            raise AssertionError("not unsupported")

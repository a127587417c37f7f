"""Backends that misbehave on purpose, in the ways real runtimes do (see test_isolation.py)."""

from __future__ import annotations

import ctypes
import os
import signal
import time

import numpy as np

from reference_backend import ReferenceBackend


class Faulty:
    name, version = "faulty", "0"

    def details(self):
        return {}

    def correct(self, model, inputs):
        return ReferenceBackend.run_model(model, [inputs[i.name] for i in model.graph.input])


class Segfaults(Faulty):
    def run(self, model, inputs):
        ctypes.string_at(0)  # reads address 0: SIGSEGV


class Aborts(Faulty):
    def run(self, model, inputs):
        os.kill(os.getpid(), signal.SIGABRT)


class ExitsItsProcess(Faulty):
    def run(self, model, inputs):
        os._exit(3)


class Hangs(Faulty):
    def run(self, model, inputs):
        time.sleep(3600)


class ExhaustsMemory(Faulty):
    def run(self, model, inputs):
        hoard = []
        while True:
            hoard.append(np.ones(2**27))  # 1 GiB at a time, until the address-space limit


class Raises(Faulty):
    def run(self, model, inputs):
        raise RuntimeError("kernel exploded")


class ReturnsAString(Faulty):
    def run(self, model, inputs):
        return "not outputs"


class ReturnsLists(Faulty):
    def run(self, model, inputs):
        return [output.tolist() for output in self.correct(model, inputs)]


class ReturnsTooMany(Faulty):
    def run(self, model, inputs):
        return self.correct(model, inputs) * 2


class CrashesOnTheFirstItemOnly(Faulty):
    """Crashes in the first process that runs an item; the restarted process answers correctly."""

    def run(self, model, inputs):
        marker = os.environ["FAULTY_MARKER"]
        if not os.path.exists(marker):
            open(marker, "w").close()
            ctypes.string_at(0)
        return self.correct(model, inputs)


class Slow(Faulty):
    """Correct, but takes 50 ms an item: long enough to interrupt a run midway."""

    def run(self, model, inputs):
        time.sleep(0.05)
        return self.correct(model, inputs)


class KillsItsProcessAtVersion22(Faulty):
    """Correct, except that it ends its own process on every MaxPool-22 model."""

    def run(self, model, inputs):
        if model.opset_import[0].version == 22:
            os._exit(1)
        return self.correct(model, inputs)


class WrongAtVersion12(Faulty):
    """Correct, except that every output is zero for opset-12 models."""

    def details(self):
        return {"kernels": "blocked"}

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        if model.opset_import[0].version == 12:
            return [np.zeros_like(o) for o in outputs]
        return outputs

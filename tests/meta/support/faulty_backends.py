"""Backends that misbehave on purpose, in the ways real runtimes do (see test_isolation.py)."""

from __future__ import annotations

import ctypes
import os
import signal
import time

import numpy as np

from conformance.backends import Unsupported
from conformance.judge.analysis.models.geometry import truncated_sizes as truncated_output_sizes
from reference_backend import ReferenceBackend


def is_valid_twin(model) -> bool:
    """Whether ``model`` is an item's valid twin (its graph is named after the twin's case,
    conformance.expand.items.valid_twin), the control a refusal is judged against."""
    return "_valid_twin/" in model.graph.name


class Faulty:
    """Each is named after its class, so that several can run side by side in one report. Each
    runs the items' valid twins correctly (conformance.expand.items.valid_twin: the control a
    refusal is judged against), so that its fault shows as the outcome it earns; one that sets
    ``faulty_twins`` is faulty on them too."""

    name, version = "faulty", "0"
    faulty_twins = False

    def __init_subclass__(cls):
        cls.name = cls.__dict__.get("name", cls.__name__)
        run = cls.__dict__.get("run")
        if run is not None and not cls.faulty_twins:
            def run_twins_correctly(self, model, inputs, run=run):
                if is_valid_twin(model):
                    return self.correct(model, inputs)
                return run(self, model, inputs)
            cls.run = run_twins_correctly

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
            hoard.append(np.empty(2**30, np.uint8))  # 1 GiB at a time, until the address-space limit


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

    name = "faulty"

    def details(self):
        return {"kernels": "blocked"}

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        if model.opset_import[0].version == 12:
            return [np.zeros_like(o) for o in outputs]
        return outputs


def _attributes(model) -> dict:
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in model.graph.node[-1].attribute}


class OneFirstLineForEveryError(Faulty):
    """A compiler whose every exception opens with the same sentence; its own diagnostic comes
    lines later, after a warning: one error for padded windows, another for dilated ones."""

    def run(self, model, inputs):
        attributes = _attributes(model)
        if any(attributes.get("pads", [])):
            raise RuntimeError(f"Error invoking the model compiler tool\nW0000 Unknown CPU vendor, using defaults\n"
                               f"/tmp/build-{os.getpid()}/model.mlir:{len(attributes)}:7: error: failed to legalize "
                               "operation 'stablehlo.reduce_window' with padding")
        if any(d != 1 for d in attributes.get("dilations", [])):
            raise RuntimeError(f"Error invoking the model compiler tool\n/tmp/build-{os.getpid()}/model.mlir:9:1: "
                               "error: dilated windows are not supported")
        return self.correct(model, inputs)


class NaNMaximaAsZero(Faulty):
    """Correct, except that a NaN maximum comes back as 0: no defect model does that."""

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        y = outputs[0]
        if y.dtype.kind == "f":
            outputs[0] = np.where(np.isnan(y), np.zeros_like(y), y)
        return outputs


class ExitsOnUnpickling(np.ndarray):
    """An array that ends whatever process unpickles it: the runner must never do so."""

    def __reduce__(self):
        return (os._exit, (9,))


class ReturnsAnArrayThatExitsOnUnpickling(Faulty):
    def run(self, model, inputs):
        return [o.view(ExitsOnUnpickling) for o in self.correct(model, inputs)]


class AlwaysEqual(np.ndarray):
    """An array that claims to equal anything: the judge must read its bytes, not ask it."""

    def __eq__(self, other):
        return np.ones(np.broadcast_shapes(self.shape, np.shape(other)), bool)

    __ne__ = lambda self, other: ~self.__eq__(other)  # noqa: E731

    def view(self, *args, **kwargs):
        return np.ones(self.shape, np.float32).view(*args, **kwargs)


class ReturnsZerosThatClaimToBeRight(Faulty):
    def run(self, model, inputs):
        return [np.zeros_like(o).view(AlwaysEqual) for o in self.correct(model, inputs)]


def _fork_sleeper(seconds=3600):
    """A child process that outlives the backend's process; its pid goes to FAULTY_PIDS if set."""
    pid = os.fork()
    if pid == 0:
        time.sleep(seconds)
        os._exit(0)
    if "FAULTY_PIDS" in os.environ:
        with open(os.environ["FAULTY_PIDS"], "a") as pids:
            pids.write(f"{pid}\n")
    return pid


class ForksAChildThatOutlivesIt(Faulty):
    """Correct, but leaves a process behind on every item."""

    def run(self, model, inputs):
        _fork_sleeper()
        return self.correct(model, inputs)


class ForksThenSegfaults(Faulty):
    """The forked child keeps the answer pipe open: a crash must still be seen at once."""

    def run(self, model, inputs):
        _fork_sleeper()
        ctypes.string_at(0)


def _daemon_in_a_session_of_its_own() -> None:
    """A daemon that double-forked into a session of its own (its pid goes to FAULTY_PIDS)."""
    if os.fork() == 0:
        os.setsid()
        _fork_sleeper()
        os._exit(0)
    os.wait()


class EscapesItsSession(Faulty):
    """Double-forks a daemon in a session of its own, then crashes."""

    def run(self, model, inputs):
        _daemon_in_a_session_of_its_own()
        os._exit(5)


class RaisesKeyboardInterrupt(Faulty):
    def run(self, model, inputs):
        raise KeyboardInterrupt


class RaisesSystemExit(Faulty):
    def run(self, model, inputs):
        raise SystemExit(3)


class RaisesGeneratorExit(Faulty):
    def run(self, model, inputs):
        raise GeneratorExit("a BaseException that is neither exit nor interrupt")


class UnprintableError(Exception):
    def __str__(self):
        raise ValueError("no text for you")


class RaisesAnExceptionWhoseStrRaises(Faulty):
    def run(self, model, inputs):
        raise UnprintableError()


class RaisesAHugeMessage(Faulty):
    def run(self, model, inputs):
        raise RuntimeError("x" * 5_000_000)


class ReturnsNone(Faulty):
    def run(self, model, inputs):
        return None


class ReturnsAZeroDimensionalArray(Faulty):
    def run(self, model, inputs):
        return np.array(4.0, np.float32)


class ReturnsABareArray(Faulty):
    def run(self, model, inputs):
        return self.correct(model, inputs)[0]


class ReturnsUnpicklableObjects(Faulty):
    def run(self, model, inputs):
        return [lambda: None]


class ReturnsAnObjectArray(Faulty):
    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        return [o.astype(object) for o in outputs]


class ReturnsAHugeArray(Faulty):
    def run(self, model, inputs):
        return [np.broadcast_to(np.float32(0), (2**20, 2**20))]  # 4 TiB, zero strides


class ReturnsTheWrongElementType(Faulty):
    def run(self, model, inputs):
        return [o.astype(np.float64) for o in self.correct(model, inputs)]


class ReturnsBigEndian(Faulty):
    def run(self, model, inputs):
        return [o.astype(o.dtype.newbyteorder(">")) for o in self.correct(model, inputs)]


class ReturnsTheWrongShape(Faulty):
    def run(self, model, inputs):
        return [o.reshape(-1) for o in self.correct(model, inputs)]


class MutatesItsInputs(Faulty):
    """Writes the expected maximum everywhere into X, then answers Indices all 0 with the right
    values: a judge that read the mutated X would see every index pointing at a maximum."""

    def run(self, model, inputs):
        values, indices = self.correct(model, inputs)
        for array in inputs.values():
            array[...] = values.max()
        return [values, np.zeros_like(indices)]


class FloodsStdoutAndStderr(Faulty):
    """Correct, after writing 64 MiB to each of stdout and stderr (and closing neither)."""

    def run(self, model, inputs):
        block = b"flood " * 10922 + b"\n"
        for _ in range(1024):
            os.write(1, block)
            os.write(2, block)
        return self.correct(model, inputs)


class ClosesStandardStreams(Faulty):
    def run(self, model, inputs):
        for fd in (0, 1, 2):
            try:
                os.close(fd)
            except OSError:  # closed on an earlier item
                pass
        return self.correct(model, inputs)


class ChangesDirectory(Faulty):
    """Correct, but leaves the process in another working directory."""

    def run(self, model, inputs):
        os.chdir("/")
        return self.correct(model, inputs)


class SetsSignals(Faulty):
    """Correct, but ignores SIGINT and SIGTERM from then on."""

    def run(self, model, inputs):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return self.correct(model, inputs)


class LeaksMemorySlowly(Faulty):
    """Keeps more memory on every item (half the address-space limit, untouched): the second
    item runs out."""

    hoard = []

    def run(self, model, inputs):
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        self.hoard.append(np.empty(limit // 2 if limit > 0 else 2**20, np.uint8))
        return self.correct(model, inputs)


class LeavesThreadsRunning(Faulty):
    """Correct, but leaves a non-daemon thread behind on every item: its process cannot exit."""

    def run(self, model, inputs):
        import threading

        threading.Thread(target=time.sleep, args=(3600,)).start()
        return self.correct(model, inputs)


class ExitsAfterAnswering(Faulty):
    """Correct, but a thread it leaves behind ends the process just after the answer."""

    def run(self, model, inputs):
        import threading

        threading.Timer(0.1, os._exit, args=(6,)).start()
        return self.correct(model, inputs)


class ExitsFromAThread(Faulty):
    def run(self, model, inputs):
        import threading

        threading.Thread(target=os._exit, args=(4,)).start()
        time.sleep(60)


class ClosesItsChannel(Faulty):
    """Closes every file descriptor above 2: the runner's pipes go with them."""

    def run(self, model, inputs):
        os.closerange(3, 1024)
        return self.correct(model, inputs)


class WaitsForTheGo(Faulty):
    """Correct, but answers only once the file named by $CONFORMANCE_GO exists: a run that is still
    going when another starts, for as long as the test needs (at most a minute)."""

    def run(self, model, inputs):
        deadline = time.monotonic() + 60
        while not os.path.exists(os.environ["CONFORMANCE_GO"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.correct(model, inputs)


class SupportsNothing(Faulty):
    """Says it cannot run any model (a build without the operator)."""

    def run(self, model, inputs):
        from conformance.backends import Unsupported
        raise Unsupported("this build has no MaxPool kernel")


class ShellsOut(Faulty):
    """Runs its kernel as a command, which fails and says why on its stderr only."""

    def run(self, model, inputs):
        import subprocess
        import sys
        subprocess.run([sys.executable, "-c", "import sys; print('loading kernel', flush=True); "
                        "sys.stderr.write('line 1: bad pads\\nline 2: kernel_shape [2, 2] needs rank 4\\n'); sys.exit(3)"],
                       check=True, capture_output=True)


class RaisesAMultilineError(Faulty):
    """Words its refusal as OpenVINO does: where first, then why, over several lines."""

    def run(self, model, inputs):
        raise RuntimeError("Exception from src/core/src/node.cpp:1\nCheck 'pads' failed at shape_infer.cpp:42:\n"
                           "While validating node 'MaxPool':\nKernel after dilation is larger than the padded data")


class ShellsOutWithoutCapture(Faulty):
    """Shells out to a command whose stderr is its own: only the process's output keeps why."""

    def run(self, model, inputs):
        import subprocess
        import sys
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('cc: error: unknown type bf16\\n'); sys.exit(1)"],
                       check=True)


class LeavesAGrandchildInAGroupOfItsOwn(Faulty):
    """Correct, but forks a process that leaves the child's process group (``setpgid(0, 0)``)."""

    def run(self, model, inputs):
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            time.sleep(3600)
            os._exit(0)
        if "FAULTY_PIDS" in os.environ:
            with open(os.environ["FAULTY_PIDS"], "a") as pids:
                pids.write(f"{pid}\n")
        return self.correct(model, inputs)


class LeavesADaemonInASessionOfItsOwn(Faulty):
    """Correct, but leaves a daemon that double-forked into a session of its own."""

    def run(self, model, inputs):
        _daemon_in_a_session_of_its_own()
        return self.correct(model, inputs)


class RefusesOpset22(Faulty):
    """Correct, but declares that it cannot run a model of opset 22 at all, as ONNX Runtime's
    adapter classifies the refusal of a release before 1.21; its checks of a model come first (an
    invalid model is refused as invalid, with no declaration), as a runtime's loader checks first."""

    faulty_twins = True  # its refusals are of whole versions: the twins' too

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        if any(o.version >= 22 for o in model.opset_import):
            raise Unsupported("ONNX Runtime only *guarantees* support for models stamped with official released onnx "
                              "opset versions. Opset 22 is under development")
        return outputs


class RefusesFourSpatialAxes(Faulty):
    """Correct, but declares it has no kernel for four or more spatial axes (ONNX Runtime's
    "Unsupported pooling size", which its adapter classifies as a capability)."""

    faulty_twins = True  # its refusals are of whole ranks: the twins' too

    def run(self, model, inputs):
        if any(len(a.shape) >= 6 for a in inputs.values()):
            raise Unsupported("Unsupported pooling size.")
        return self.correct(model, inputs)


class RefusesPads(Faulty):
    """Correct, but refuses every node with explicit pads (which no valid twin has)."""

    def run(self, model, inputs):
        if any(a.name == "pads" for node in model.graph.node for a in node.attribute):
            raise RuntimeError("pads are not implemented")
        return self.correct(model, inputs)


class RefusesEverything(Faulty):
    """Refuses every model, its twins too, with no declaration: a bug on every valid model."""

    faulty_twins = True

    def run(self, model, inputs):
        raise RuntimeError("no kernels at all")


class RefusesAndGarblesItsTwin(Faulty):
    """Refuses every item and answers its twin with garbage: the twin is no control."""

    faulty_twins = True

    def run(self, model, inputs):
        if is_valid_twin(model):
            return "not outputs"
        raise RuntimeError("refused")


class LowestFiniteInEmptyWindows(Faulty):
    """Correct, but a window without elements gives the type's lowest finite value, a max loop's
    natural seed (-FLT_MAX), where the reference gives -inf: a value the documents leave undefined."""

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        y = outputs[0]
        if np.issubdtype(y.dtype, np.floating):
            outputs[0] = np.where(np.isneginf(y), np.finfo(y.dtype).min, y).astype(y.dtype)
        return outputs


class FreshGarbageInEmptyWindows(Faulty):
    """Correct, but a window without elements gives whatever the memory held: a new value each run."""

    def run(self, model, inputs):
        outputs = self.correct(model, inputs)
        y = outputs[0]
        if np.issubdtype(y.dtype, np.floating):
            noise = np.random.default_rng().uniform(1, 100, y.shape).astype(y.dtype)
            outputs[0] = np.where(np.isneginf(y), noise, y).astype(y.dtype)
        return outputs


class ChecksOnlyDeclaredShapes(Faulty):
    """Refuses an invalid model only where the graph declares every input's shape (its checks live
    in its load-time shape inference); where a shape is symbolic or absent, it runs the model and
    answers zeros. Right on every item whose inputs are declared."""

    def run(self, model, inputs):
        try:
            return self.correct(model, inputs)
        except Exception:
            declared = all(i.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in i.type.tensor_type.shape.dim)
                           for i in model.graph.input)
            if declared:
                raise
            return [np.zeros((1,), np.float32) for _ in model.graph.output]


class DividesWithTruncation(Faulty):
    """Computes ai.onnx MaxPool's output sizes with truncating integer division
    (conformance.judge.analysis.models.geometry.truncated_sizes, the defect model
    output_size_truncated): where a numerator is negative and not a multiple of the stride, it
    pools one window more than the printed floor or ceil, over the whole padded axis. Right wherever its sizes agree with the documents'."""

    def run(self, model, inputs):
        node = model.graph.node[0]
        if len(model.graph.node) != 1 or node.op_type != "MaxPool" or node.domain not in ("", "ai.onnx"):
            return self.correct(model, inputs)
        import onnx

        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        attributes = {k: v.decode() if isinstance(v, bytes) else v for k, v in attributes.items()}
        x = inputs[model.graph.input[0].name]
        try:
            wanted = truncated_output_sizes(attributes, x.shape[2:])
            expected = self.correct(model, inputs)[0].shape[2:]
        except Exception:  # noqa: BLE001 - a model the formula cannot size (an invalid one) runs as it is
            return self.correct(model, inputs)
        grown = [i for i, (w, e) in enumerate(zip(wanted, expected)) if w > e]
        if not grown:
            return self.correct(model, inputs)
        # One window more on those axes: the explicit pads grown at the end until the span is 0.
        rank = len(wanted)
        if attributes.get("auto_pad", "NOTSET") == "VALID":
            attributes["auto_pad"], attributes["pads"] = "NOTSET", [0] * (2 * rank)
        pads = list(attributes.get("pads") or [0] * (2 * rank))
        dilations = attributes.get("dilations") or [1] * rank
        for i in grown:
            extent = (attributes["kernel_shape"][i] - 1) * dilations[i] + 1
            pads[i + rank] += extent - (x.shape[2 + i] + pads[i] + pads[i + rank])
        attributes["pads"] = pads
        changed = onnx.helper.make_node("MaxPool", list(node.input), list(node.output), **attributes)
        mutated = onnx.ModelProto()
        mutated.CopyFrom(model)
        del mutated.graph.node[:]
        mutated.graph.node.append(changed)
        del mutated.graph.output[:]
        mutated.graph.output.extend(onnx.helper.make_tensor_value_info(o.name, o.type.tensor_type.elem_type, None)
                                    for o in model.graph.output)
        return self.correct(mutated, inputs)


class PanicException(BaseException):
    """As pyo3's: a Rust panic reaches Python as a BaseException, not an Exception."""


def has_indices(model) -> bool:
    return len(model.graph.output) > 1 and any(node.op_type.endswith("MaxPool") for node in model.graph.node)


class FailsOnIndices(Faulty):
    """Correct, but fails every model with MaxPool's Indices output, its valid twins included (a
    bug on the minimal valid model, never a declared refusal), in the way ``fail`` says."""

    faulty_twins = True

    def run(self, model, inputs):
        if has_indices(model):
            self.fail()
        return self.correct(model, inputs)


class PanicsOnIndices(FailsOnIndices):
    def fail(self):
        raise PanicException("internal validation error: the Indices buffer is not bound")


class SegfaultsOnIndices(FailsOnIndices):
    def fail(self):
        ctypes.string_at(0)


class AttributeErrorOnIndices(FailsOnIndices):
    def fail(self):
        raise AttributeError("'NoneType' object has no attribute 'indices'")


class HangsOnIndices(FailsOnIndices):
    def fail(self):
        time.sleep(3600)


class KillsItselfOnIndices(FailsOnIndices):
    def fail(self):
        os.kill(os.getpid(), signal.SIGKILL)


class NotImplementedOnIndices(FailsOnIndices):
    """Declares what it cannot run: the suite's interface's NotImplementedError."""

    def fail(self):
        raise NotImplementedError("MaxPool's Indices output")


class SeedsFloat32AtLowestFinite(LowestFiniteInEmptyWindows):
    """ONNX Runtime's MLAS, in short: float32 maxima of -inf come back as -FLT_MAX, the running
    maximum's seed (on whichever shapes a machine's vector kernels take)."""


class SeedsAtLowestFiniteAndShiftsIndices(Faulty):
    """The seed bug above and a second one on the same items: every index one too far."""

    def run(self, model, inputs):
        outputs = SeedsFloat32AtLowestFinite.run(self, model, inputs)
        return [outputs[0], *(i + 1 for i in outputs[1:])]


class RefusesInvalidModelsInCapabilityWords(Faulty):
    """Correct, but words its refusal of an invalid model as a capability (OpenVINO's "Expected a
    3D, 4D or 5D tensor for the input" for its own 6-D MaxPool): declared, and a refusal all the same."""

    def run(self, model, inputs):
        try:
            return self.correct(model, inputs)
        except Exception as e:
            raise Unsupported(f"Expected a 3D, 4D or 5D tensor for the input ({e})") from e

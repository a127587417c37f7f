"""Times the reference backend, ONNX Runtime (CPU) and onnx.reference on large max poolings, in
one process: `nox -s bench`, or `python -m bench.benchmark [--quick] [--markdown FILE]`.

Each backend prepares the model once (session, evaluator, or the reference's validated graph)
and is timed on `run` alone: the median of repeated runs after a warm-up, onnx.reference only
once where a run takes seconds. The table also says whether the three agree on the outputs
(the inputs are random normals or integers, far from the open questions).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

from reference_backend import ReferenceBackend

FLOAT, UINT8, INT64 = onnx.TensorProto.FLOAT, onnx.TensorProto.UINT8, onnx.TensorProto.INT64
K3S2P1 = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
K2S2 = {"kernel_shape": [2, 2], "strides": [2, 2]}


@dataclass(frozen=True)
class Case:
    name: str
    op: str
    shape: tuple[int, ...]
    element_type: int
    attributes: dict
    indices: bool = False

    def model(self) -> onnx.ModelProto:
        elem = self.element_type
        if self.op == "MaxPool":
            inputs = [helper.make_tensor_value_info("X", elem, self.shape)]
            outputs = [helper.make_tensor_value_info("Y", elem, None)]
            if self.indices:
                outputs.append(helper.make_tensor_value_info("Indices", INT64, None))
        else:
            inputs = [helper.make_tensor_value_info("X", elem, self.shape),
                      helper.make_tensor_value_info("I", INT64, self.shape)]
            outputs = [helper.make_tensor_value_info("Y", elem, None)]
        node = helper.make_node(self.op, [i.name for i in inputs], [o.name for o in outputs], **self.attributes)
        imports = [helper.make_opsetid("", 12 if self.op == "MaxPool" else 11)]
        return helper.make_model(helper.make_graph([node], self.name, inputs, outputs), opset_imports=imports,
                                 ir_version=helper.find_min_ir_version_for(imports))

    def inputs(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(0)
        if self.element_type == UINT8:
            x = rng.integers(0, 256, self.shape, dtype=np.uint8)
        else:
            x = rng.standard_normal(self.shape, dtype=np.float32)
        if self.op == "MaxPool":
            return {"X": x}
        # MaxUnpool undoes the pooling that made its input: the indices of a real MaxPool.
        pooled_from = (self.shape[:2] + tuple(d * 2 for d in self.shape[2:]))
        pool = Case("pool", "MaxPool", pooled_from, self.element_type, K2S2, indices=True)
        y, i = ReferenceBackend.run_model(pool.model(), [rng.standard_normal(pooled_from, dtype=np.float32)])
        return {"X": y, "I": i}


def cases(quick: bool) -> list[Case]:
    big, image, volume = ((2, 8, 28, 28), (1, 3, 56, 56), (1, 4, 8, 8, 8)) if quick else \
        ((8, 64, 112, 112), (1, 3, 224, 224), (2, 16, 32, 32, 32))
    found = []
    for shape in (big, image):
        label = "x".join(map(str, shape))
        for element_type, type_name in ((FLOAT, "float32"), (UINT8, "uint8")):
            for attrs, attrs_name in ((K3S2P1, "k3 s2 p1"), (K2S2, "k2 s2")):
                for indices in (False, True):
                    found.append(Case(f"{type_name} {label} {attrs_name}{' +Indices' if indices else ''}", "MaxPool",
                                      shape, element_type, attrs, indices))
    label = "x".join(map(str, volume))
    for indices in (False, True):
        found.append(Case(f"float32 {label} k3 s2{' +Indices' if indices else ''}", "MaxPool", volume, FLOAT,
                          {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2]}, indices))
    pooled = big[:2] + tuple(d // 2 for d in big[2:])
    found.append(Case(f"MaxUnpool float32 {'x'.join(map(str, pooled))} k2 s2", "MaxUnpool", pooled, FLOAT, K2S2))
    return found


def median_ms(run, inputs, repeats: int, budget_s: float) -> tuple[float, list[np.ndarray]]:
    start = time.perf_counter()
    outputs = run(inputs)  # warm-up, and the outputs to compare
    first = time.perf_counter() - start
    if first > budget_s:
        return first * 1e3, outputs
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(inputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, outputs


def runners(model: onnx.ModelProto):
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    reference = ReferenceBackend.prepare(model)
    evaluator = ReferenceEvaluator(model)
    names = [i.name for i in model.graph.input]
    return {
        "reference": lambda feeds: reference.run([feeds[n] for n in names]),
        "ort": lambda feeds: session.run(None, feeds),
        "onnx.reference": lambda feeds: evaluator.run(None, feeds),
    }


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small shapes: checks that the benchmark runs")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args(argv)

    import onnxruntime

    lines = [f"Medians in ms; {platform.processor() or platform.machine()}, {_cores()} cores; numpy {np.__version__}, "
             f"onnxruntime {onnxruntime.__version__}, onnx {onnx.__version__}.", "",
             "| case | reference | ORT | onnx.reference | reference / ORT | onnx.reference / reference | agree |",
             "|---|---:|---:|---:|---:|---:|---|"]
    print("\n".join(lines), flush=True)
    for case in cases(args.quick):
        model, inputs = case.model(), case.inputs()
        timed = {name: median_ms(run, inputs, args.repeats, budget_s=2.0) for name, run in runners(model).items()}
        ref, ort, slow = (timed[n][0] for n in ("reference", "ort", "onnx.reference"))
        agree = ("yes" if same(timed["reference"][1], timed["ort"][1]) else "ORT differs") + \
            ("" if same(timed["reference"][1], timed["onnx.reference"][1]) else ", onnx.reference differs")
        line = f"| {case.name} | {ref:.2f} | {ort:.2f} | {slow:.0f} | {ref / ort:.2f} | {slow / ref:.0f} | {agree} |"
        lines.append(line)
        print(line, flush=True)
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    return 0


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    sys.exit(main())

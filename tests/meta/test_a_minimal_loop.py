"""The case files are the product: a loop of a few lines with no suite code, reading the exported
items (`conformance export`) and running ONNX Runtime on them, reproduces the suite's verdicts on
the documented examples, as any short loop runs JSON-Schema-Test-Suite's cases."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conformance.backends import load_backend
from conformance.export import export
from conformance.judge.verdict import evaluate
from conformance.load.cases import bundled_case_dir, load_registry
from conformance.expand.items import load_items

pytest.importorskip("onnxruntime")

# Everything a runner needs: onnx to read the files, numpy to compare, the runtime. Nothing else.
LOOP = '''
import json, pathlib, sys
import numpy as np, onnx, onnxruntime
from onnx import numpy_helper
root, verdicts = pathlib.Path(sys.argv[1]), {}
for test in json.loads((root / "manifest.json").read_text())["tests"]:
    if test["kind"] != "judged" or test["expected"] != "literal":
        continue  # ties, open questions and invalid models need more than a literal comparison
    directory = root / test["test"]
    data = directory / "test_data_set_0"
    def read(prefix):
        files = sorted(data.glob(prefix + "_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in files]
    inputs, wanted = read("input"), read("output")
    try:
        session = onnxruntime.InferenceSession(str(directory / "model.onnx"), providers=["CPUExecutionProvider"])
        got = session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})
    except Exception:
        verdicts[test["id"]] = "error"
        continue
    def same(g, w):  # bit for bit, any NaN equal to any NaN
        if g.dtype != w.dtype or g.shape != w.shape:
            return False
        if g.dtype.kind == "f":
            return bool(np.array_equal(g, w, equal_nan=True) and np.array_equal(np.signbit(g), np.signbit(w)))
        return g.tobytes() == w.tobytes()
    verdicts[test["id"]] = "pass" if len(got) == len(wanted) and all(map(same, got, wanted)) else "fail"
print(json.dumps(verdicts))
'''


def test_a_loop_without_the_suite_gives_the_suite_s_verdicts_on_the_documented_examples(tmp_path):
    assert len(LOOP.strip().splitlines()) <= 50
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("ambiguities.yaml", "maxpool.yaml", "maxunpool.yaml"):
        shutil.copy(bundled_case_dir() / name, cases / name)
    export(cases, tmp_path / "exported", seed=0)
    (tmp_path / "loop.py").write_text(LOOP)
    run = subprocess.run([sys.executable, "-I", str(tmp_path / "loop.py"), str(tmp_path / "exported")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, check=True)
    loop = json.loads(run.stdout)
    registry = load_registry(cases)
    ort = load_backend("ort")
    suite = {}
    for item in load_items(cases, registry):
        if item.id in loop:
            outcome = evaluate(item, ort, 0, registry).outcome.value
            suite[item.id] = {"unsupported": "error", "crash": "error"}.get(outcome, outcome)
    assert len(loop) >= 49 and set(suite) == set(loop)
    assert suite == loop, {i: (suite[i], loop[i]) for i in loop if suite[i] != loop[i]}

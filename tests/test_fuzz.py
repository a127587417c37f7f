"""`conformance fuzz`: it finds each broken variant of the reference within its default budget,
its clusters become cases the suite loads and scripts that reproduce alone, its results are
schema-valid, and a seed gives the same run."""

from __future__ import annotations

import functools
import importlib
import json
import math
import time

import jsonschema
import numpy as np
import pytest

from conformance.load.cases import SCHEMA_DIR, load_case_file
from conformance.cli import main
from conformance.judge.verdict import Outcome, evaluate
from conformance.expand.items import expand
from conformance.fuzz.command import write_fuzz_reports
from conformance.fuzz.engine import DEFAULT_BUDGET, Fuzzer, _tiny, variations
from conformance.fuzz.output import repro_script, write_cases, write_repros
from conformance.scripts.runners import GENERIC_RUNNER
from conformance.fuzz.space import Target, all_targets, select_targets
from conformance.report.writer import environment
from conformance.backends.onnx_backend import OnnxBackendAdapter
from reference_backend import ReferenceBackend
from tests.support.bundled import bundled_items, bundled_registry
from tests.meta.support.mutants import MUTANTS
from tests.meta.support.mutants_depth import DEPTH_MUTANTS, SUITE_ONLY
from tests.meta.support.mutants_paths import PATH_MUTANTS
from tests.meta.support.mutant_backend import REGISTRY, MutantBackend
from tests.support.named import names

REFERENCE = OnnxBackendAdapter(ReferenceBackend, name="reference")


@functools.cache
def reference_targets() -> list:
    """Every operator version with the element types the reference runs, probed once: each mutant
    wraps the reference, and an element type it calls unsupported is judged so, never a failure."""
    return Fuzzer(REFERENCE, REGISTRY, all_targets()).supported(all_targets())


def fuzz(mutant, **options):
    options = {"seed": 0, "budget": DEFAULT_BUDGET, "stop_at_first": True, "probe": False, **options}
    return Fuzzer(MutantBackend(mutant), REGISTRY, reference_targets(), **options).fuzz()


@pytest.mark.parametrize("mutant", [m for m in MUTANTS + PATH_MUTANTS + DEPTH_MUTANTS if m.name not in SUITE_ONLY],
                         ids=lambda m: m.name)
@pytest.mark.slow
def test_the_fuzz_finds_the_mutant(mutant, record_property):
    started = time.monotonic()
    run = fuzz(mutant)
    found = run.clusters[0] if run.clusters else None
    record_property("fuzz", {"mutant": mutant.name, "configurations": run.judged,
                             "seconds": round(time.monotonic() - started, 2),
                             "found": found.signature.describe() if found else None})
    assert found, f"{DEFAULT_BUDGET} configurations do not find {mutant.name}: {mutant.bug}"


def _mutant(name):
    return next(m for m in MUTANTS + PATH_MUTANTS + DEPTH_MUTANTS if m.name == name)


def test_a_seed_gives_the_same_run():
    first, second = (fuzz(_mutant("padding_is_zero"), budget=120, stop_at_first=False, shrink=False) for _ in range(2))
    assert [(c.signature, c.hits, c.found_after) for c in first.clusters] == \
           [(c.signature, c.hits, c.found_after) for c in second.clusters]
    assert first.clusters and first.outcomes == second.outcomes


def test_a_seed_gives_the_same_draws_whatever_the_process_imported(tmp_path, monkeypatch):
    """Hypothesis mixes the literals of loaded local modules into its draws: a module imported
    between two runs (the pytest plugin, an adapter) must not change the sequence."""
    def draws():
        seen = []

        class Recording(Fuzzer):
            def judge(self, config):
                seen.append(repr(config))
                return super().judge(config)

        Recording(MutantBackend(_mutant("padding_is_zero")), REGISTRY, reference_targets(), seed=3, budget=150,
                  stop_at_first=False, shrink=False, probe=False).fuzz()
        return seen

    before = draws()
    (tmp_path / "vendor_literals.py").write_text(
        "LITERALS = " + repr([n * 97 for n in range(1, 400)] + [2.5, -0.0, 1e30, "pads"]) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("vendor_literals")
    assert draws() == before


@pytest.fixture(scope="module")
def shrunk():
    """A shrunk run against a mutant whose padding takes part in the maximum."""
    mutant = _mutant("padding_is_zero")
    run = Fuzzer(MutantBackend(mutant), REGISTRY, select_targets("MaxPool-12"), seed=1, budget=25,
                 shrink_s=8).fuzz()  # each shrink takes under 2 s on an idle machine
    assert run.clusters
    return mutant, run


def test_clusters_become_cases_the_suite_loads_and_judges(shrunk, tmp_path):
    mutant, run = shrunk
    (file,) = write_cases(run, tmp_path)
    cases = load_case_file(file, REGISTRY)  # schema and signatures checked
    assert len(cases) == len(run.clusters)
    for case in cases:
        (item,) = expand(case)
        assert evaluate(item, REFERENCE, 0, REGISTRY).outcome is Outcome.PASS
        assert evaluate(item, MutantBackend(mutant), 0, REGISTRY).outcome in (Outcome.FAIL, Outcome.ERROR)


def test_a_minimal_model_is_small(shrunk):
    _, run = shrunk
    for cluster in run.clusters:
        assert sum(math.prod(i.spec.shape) for i in cluster.item.inputs) <= 512  # shrunk (drawn: up to 4,096)
        # padding is the bug: explicit, automatic, or where a ceil window runs past the end
        assert {"pads", "auto_pad", "ceil_mode"} & set(cluster.config["attributes"])
        assert cluster.matters


def test_repro_scripts_stand_alone(shrunk, tmp_path):
    mutant, run = shrunk
    for cluster in run.clusters:
        script = repro_script(cluster, run)
        assert "conformance" not in script.split('"""')[-1]  # no import of this project
        for backend, status in ((MutantBackend(mutant), 1), (REFERENCE, 0)):
            runner = "def run(model, feeds):\n    return BACKEND.run(model, feeds)\n"
            with pytest.raises(SystemExit) as exit_:
                exec(compile(script.replace(GENERIC_RUNNER, runner), "repro.py", "exec"), {"BACKEND": backend,
                                                                                       "__name__": "__main__"})
            assert exit_.value.code == status
    assert len(write_repros(run, tmp_path)) == len(run.clusters)


def test_results_are_schema_valid_and_rendered(shrunk, tmp_path):
    mutant, run = shrunk
    backend = MutantBackend(mutant)
    write_fuzz_reports(environment([(backend, backend)], 1, tmp_path), [run], tmp_path, out=tmp_path)
    document = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(document, json.loads((SCHEMA_DIR / "results.schema.json").read_text()))
    assert document["fuzz"][0]["clusters"][0]["matters"]
    assert len(document["items"]) == len(run.clusters)
    assert "id='fuzz'" in (tmp_path / "report.html").read_text()
    assert "## Fuzz" in (tmp_path / "summary.md").read_text()


def test_the_command_fuzzes_a_backend(tmp_path, capsys):
    assert main(["fuzz", "--backend=reference", "--budget=40", "--ops=MaxPool-12", "--isolation=none"]) == 0
    assert "40 configurations" in capsys.readouterr().out
    # A backend wrong at opset 12: exit 1, and each cluster written as a case and a repro script.
    assert main(["fuzz", "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", "--budget=40", "--ops=MaxPool-12",
                 "--isolation=none", "--no-shrink", "--out", str(tmp_path)]) == 1
    assert list((tmp_path / "cases").glob("*.yaml")) and list((tmp_path / "repro").glob("*.py"))
    assert main(["fuzz", "--backend=reference", "--ops=MaxPool-7"]) == 2


def test_a_run_that_judges_nothing_is_no_pass(capsys):
    assert main(["fuzz", "--backend=tests.meta.support.faulty_backends:SupportsNothing", "--budget=20", "--ops=MaxPool-12",
                 "--isolation=none"]) == 2
    assert "nothing was judged" in capsys.readouterr().err



def test_a_type_variation_leaves_out_the_values_the_type_cannot_hold():
    # float32's lowest finite value overflows float16: onnx.reference's fuzz stopped on it
    config = _tiny(Target("ai.onnx", "MaxPool", 12), "float32")
    config["filling"] = dict(config["filling"], palette=[-3.4028234663852886e38, -math.inf, 1.0])
    palettes = {selector: changed["filling"]["palette"] for selector, changed in variations(config)
                if selector.startswith("dtype=")}
    assert palettes["dtype=float16"] == [-math.inf, 1.0]
    assert palettes["dtype=float64"] == [-3.4028234663852886e38, -math.inf, 1.0]
    assert palettes["dtype=int8"] == [1]


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.slow
def test_pytest_s_fuzz_keeps_its_runs_in_the_report_with_or_without_workers(tmp_path, workers):
    # Under -n 2 the fuzz ran on a worker and the controller's results.json had no fuzz section.
    import subprocess
    import sys
    from conformance.plugin import PACKAGE_DIR
    command = [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "-q", "-p", "no:cacheprovider", "-n", workers,
               "--backend=tests.meta.support.faulty_backends:WrongAtVersion12", "--conformance-fuzz=30",
               f"--report={tmp_path / 'report'}", f"--conformance-fuzz-out={tmp_path / 'out'}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-2000:]
    document = json.loads((tmp_path / "report" / "results.json").read_text())
    jsonschema.validate(document, json.loads((SCHEMA_DIR / "results.schema.json").read_text()))
    (section,) = document["fuzz"]
    assert section["configurations"] > 0 and section["clusters"] and len(document["items"]) == len(section["clusters"])
    repro = section["clusters"][0]["repro"]  # where the script is, under the backend's folder
    assert repro.startswith((tmp_path / "out" / "tests.meta.support.faulty_backends:WrongAtVersion12" / "repro").as_posix())
    assert (tmp_path / "out").joinpath(*repro.split("/out/")[1].split("/")).is_file()
    assert (tmp_path / "report" / "report.html").read_text().count("id='fuzz'") == 1


def _script_exit(script: str, run) -> tuple[int, str]:
    """Run a repro script with ``run`` as the runtime: its exit status and what it printed."""
    import contextlib
    import io
    runner = "def run(model, feeds):\n    return RUN(model, feeds)\n"
    printed = io.StringIO()
    with pytest.raises(SystemExit) as exit_, contextlib.redirect_stdout(printed):
        exec(compile(script.replace(GENERIC_RUNNER, runner), "repro.py", "exec"), {"RUN": run, "__name__": "__main__"})
    return exit_.value.code, printed.getvalue()


def _correct(model, feeds):
    return REFERENCE.run(model, feeds)


def _raises(model, feeds):
    raise RuntimeError("no")


# Each way a runtime may get a valid model wrong, and the words the script must print for it.
WRONG_ANSWERS = [
    ("fewer outputs than declared", lambda m, f: _correct(m, f)[:-1], "BUG: the runtime returns"),
    ("more outputs than declared", lambda m, f: [*_correct(m, f), _correct(m, f)[0]], "BUG: the runtime returns"),
    ("no outputs", lambda m, f: [], "BUG: the runtime returns 0 outputs"),
    ("values", lambda m, f: [o + 1 if o.dtype.kind != "f" else o * 2 + 1 for o in _correct(m, f)], "MISMATCH"),
    ("element type", lambda m, f: [o.astype(np.float64) for o in _correct(m, f)], "MISMATCH"),
    ("shape", lambda m, f: [o[:, :, :1] for o in _correct(m, f)], "MISMATCH"),
    ("not arrays", lambda m, f: [None for _ in _correct(m, f)], "MISMATCH"),
    ("a refusal", _raises, "BUG: the runtime refuses a valid model"),
]


def _cluster_with_indices(reject: str | None = None):
    """A cluster of a MaxPool-12 item with Y and Indices, as the fuzz would report it."""
    from conformance.fuzz.engine import Cluster, FuzzRun, Signature
    from conformance.judge.verdict import Verdict
    item = next(i for i in bundled_items() if i.id == "MaxPool-12/with_argmax_2d_precomputed_pads[float32]")
    config = {"reject": reject} if reject else {}
    from conformance.judge.oracle import script_values
    cluster = Cluster(Signature("MaxPool", "fail", "values", "float32", True), config, item,
                      Verdict(Outcome.FAIL, "Y: 1 of 9 elements differ"), values=script_values(item, 0, bundled_registry()))
    return cluster, FuzzRun("mine", "1.0", 0, 1)


@pytest.mark.parametrize("wrong, words", [(w[1], w[2]) for w in WRONG_ANSWERS], ids=[w[0] for w in WRONG_ANSWERS])
def test_an_output_repro_fails_on_every_kind_of_wrong_answer_and_passes_the_right_one(wrong, words):
    script = repro_script(*_cluster_with_indices())
    status, printed = _script_exit(script, _correct)
    assert status == 0 and printed.endswith("as expected\n")
    status, printed = _script_exit(script, wrong)
    assert status == 1 and words in printed and "as expected" not in printed, printed


def test_a_refusal_repro_fails_when_the_invalid_model_runs_and_passes_when_refused():
    script = repro_script(*_cluster_with_indices(reject="a made-up reason"))
    assert _script_exit(script, _raises)[0] == 0
    status, printed = _script_exit(script, _correct)
    assert status == 1 and printed.startswith("BUG: the runtime ran an invalid model")


@pytest.mark.parametrize("name", ["padding_is_zero", "indices_per_plane"])
@pytest.mark.slow
def test_a_backend_with_one_defect_gets_at_most_two_clusters(name):
    """Clusters merge where one defect model explains them (across operators, element types and
    outputs), and refusals with one diagnostic across element types; the diagnosed one leads."""
    run = fuzz(_mutant(name), stop_at_first=False, budget=300)
    assert 1 <= len(run.clusters) <= 2, [c.signature.describe() for c in run.clusters]
    assert name in names(run.clusters[0].verdict.diagnosis)

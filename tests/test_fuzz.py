"""`conformance fuzz`: it finds each broken variant of the reference within its default budget,
its clusters become cases the suite loads and scripts that reproduce alone, its results are
schema-valid, and a seed gives the same run."""

from __future__ import annotations

import functools
import json
import math
import time

import jsonschema
import pytest

from conformance.load.cases import SCHEMA_DIR, load_case_file
from conformance.cli import main
from conformance.judge.verdict import Outcome, evaluate
from conformance.expand.items import expand
from conformance.fuzz.command import write_fuzz_reports
from conformance.fuzz.engine import DEFAULT_BUDGET, Fuzzer, _tiny, variations
from conformance.fuzz.output import GENERIC_RUNNER, repro_script, write_cases, write_repros
from conformance.fuzz.space import Target, all_targets, select_targets
from conformance.report.writer import environment
from conformance.backends.onnx_backend import OnnxBackendAdapter
from reference_backend import ReferenceBackend
from tests.mutants import MUTANTS
from tests.mutants_depth import DEPTH_MUTANTS, SUITE_ONLY
from tests.mutants_paths import PATH_MUTANTS
from tests.test_mutants import REGISTRY, MutantBackend

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
    assert main(["fuzz", "--backend=tests.faulty_backends:WrongAtVersion12", "--budget=40", "--ops=MaxPool-12",
                 "--isolation=none", "--no-shrink", "--out", str(tmp_path)]) == 1
    assert list((tmp_path / "cases").glob("*.yaml")) and list((tmp_path / "repro").glob("*.py"))
    assert main(["fuzz", "--backend=reference", "--ops=MaxPool-7"]) == 2


def test_a_run_that_judges_nothing_is_no_pass(capsys):
    assert main(["fuzz", "--backend=tests.faulty_backends:SupportsNothing", "--budget=20", "--ops=MaxPool-12",
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

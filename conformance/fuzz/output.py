"""What a fuzz run leaves behind: each cluster as a ready-to-commit case (one YAML file per
operator, loadable with ``--cases``), a standalone repro script per cluster, and the run's
section of results.json with the minimal items as records."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from ..expand.items import qualified_op
from ..scripts.standalone import standalone_script
from ..report.record import ItemRecord, json_safe, with_verdict
from ..atomic import write_atomically
from .cases import file_document, materialize
from .engine import Cluster, FuzzRun

CASES_DIR = "cases"
REPRO_DIR = "repro"


def cluster_name(cluster: Cluster) -> str:
    digest = hashlib.sha1(repr(cluster.signature).encode()).hexdigest()[:6]
    op = cluster.signature.op.split(".")[-1].lower()
    return f"fuzz_{op}_{cluster.signature.slug()}_{digest}"


def case_of(cluster: Cluster, run: FuzzRun) -> dict[str, Any]:
    signature = cluster.signature
    matters = ", ".join(cluster.matters) or "none of the varied selectors"
    return materialize(
        cluster.config, cluster_name(cluster),
        description=f"the minimal model of a fuzz failure cluster ({signature.kind}) runs as the reference runs it",
        generated=f"Minimal configuration of a failure cluster found by `conformance fuzz --seed {run.seed}` against "
                  f"{run.backend} {run.backend_version} ({cluster.hits} of {run.judged} configurations): "
                  f"{cluster.verdict.message[:300]}. Changing one of these makes it pass: {matters}.",
    )


def case_file_name(domain: str, op: str) -> str:
    """The file of an operator's cases (all its versions)."""
    return f"fuzz_{qualified_op(domain, op).lower().replace('.', '_')}.yaml"


def write_cases(run: FuzzRun, directory: Path) -> list[Path]:
    """One case file per operator, each cluster a case."""
    by_operator: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cluster in run.clusters:
        target = cluster.config["target"]
        by_operator.setdefault((target.domain, target.op), []).append(case_of(cluster, run))
    written = []
    for (domain, op), cases in sorted(by_operator.items()):
        file = directory / CASES_DIR / case_file_name(domain, op)
        header = (f"# Failure clusters of `conformance fuzz` against {run.backend} {run.backend_version} "
                  f"(seed {run.seed}), one minimal case each; outputs are derived by the reference.\n")
        write_atomically(file, header + dump_yaml(file_document(domain, op, cases)))
        written.append(file)
    return written


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]  # libyaml's emitter where PyYAML has it
    """Every checkpoint of a run writes each cluster's case again: libyaml emits the same text
    as PyYAML's own emitter (compared on the clusters of several runs) two to three times faster."""


def _flow_lists(dumper: yaml.SafeDumper, data: list):
    nested = any(isinstance(v, (list, dict)) for v in data)
    known = dumper.__dict__.setdefault("numbers_only", {})  # per list (alive while dumped), each walked once
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data,
                                     flow_style=not nested or _numbers_only(data, known))


def _numbers_only(data: Any, known: dict[int, bool]) -> bool:
    if not isinstance(data, list):
        return isinstance(data, (int, float)) and not isinstance(data, bool)
    if id(data) not in known:
        known[id(data)] = all(_numbers_only(v, known) for v in data)
    return known[id(data)]


_Dumper.add_representer(list, _flow_lists)


def dump_yaml(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=110, allow_unicode=True)


def repro_script(cluster: Cluster, run: FuzzRun) -> str:
    found = (f"Found by `conformance fuzz --backend={run.backend} --seed={run.seed}` against {run.backend} "
             f"{run.backend_version}, shrunk to a minimal model.")
    seen = f"{cluster.verdict.outcome.value}: {cluster.verdict.message[:400]}"
    assert cluster.values is not None, "a cluster keeps the values it was judged against"
    return standalone_script(cluster.item, *cluster.values, run.backend, cluster.config.get("reject"),
                             [cluster.signature.describe(), "", found, f"What the suite saw: {seen}"])


def write_repros(run: FuzzRun, directory: Path) -> list[Path]:
    written = []
    for cluster in run.clusters:
        file = directory / REPRO_DIR / f"{cluster_name(cluster)}.py"
        write_atomically(file, repro_script(cluster, run))
        written.append(file)
    return written


# ---- results.json ----

def fuzz_section(run: FuzzRun, directory: Path | None) -> dict[str, Any]:
    """The run's entry in results.json's ``fuzz`` list."""
    def where(kind: str, cluster: Cluster) -> str | None:
        if directory is None:
            return None
        if kind == REPRO_DIR:
            return (directory / REPRO_DIR / f"{cluster_name(cluster)}.py").as_posix()
        return (directory / CASES_DIR / case_file_name(cluster.item.case.domain, cluster.item.case.op)).as_posix()

    return {
        "backend": run.backend, "backend_version": run.backend_version, "seed": run.seed, "budget": run.budget,
        "configurations": run.judged, "discarded": run.discarded, "outcomes": dict(sorted(run.outcomes.items())),
        "seconds": round(run.seconds, 3), "per_second": round(run.per_second, 2), "unsupported": run.unsupported,
        "stopped": run.stopped,
        "clusters": [{
            "name": cluster_name(c), "op": c.signature.op, "outcome": c.signature.outcome, "kind": c.signature.kind,
            "dtype": c.signature.dtype, "indices": c.signature.indices, "hits": c.hits,
            "found_after": c.found_after, "found_after_s": c.found_after_s, "message": c.verdict.message,
            "matters": c.matters, "selectors": c.selectors,
            **{k: v for k, v in (("case_file", where(CASES_DIR, c)), ("repro", where(REPRO_DIR, c))) if v},
        } for c in run.clusters],
    }


def run_document(run: FuzzRun, directory: Path | None) -> dict[str, Any]:
    """What results.json keeps of a run, JSON-safe: it travels from a pytest-xdist worker to the
    controller that writes the report."""
    return {"records": records(run), "section": fuzz_section(run, directory)}


def records(run: FuzzRun) -> list[ItemRecord]:
    """Each cluster's minimal item as a results.json record."""
    found = []
    for c in run.clusters:
        item, case = c.item, c.item.case
        name = cluster_name(c)
        record: ItemRecord = {
            "id": item.id.replace("/fuzz[", f"/{name}["), "case": name,
            "file": f"{CASES_DIR}/{case_file_name(case.domain, case.op)}",
            "op": qualified_op(case.domain, case.op), "domain": case.domain, "version": item.version,
            "opset_imports": item.opset_imports,
            "attributes": {k: json_safe(v) for k, v in case.attributes.items()},
            "inputs": [{"name": i.name, "shape": list(i.shape), "dtype": i.dtype.name} for i in item.inputs],
            "expected": item.expectation, "erratum": None,
            "backend": run.backend, "backend_version": run.backend_version, "repro": f"python {REPRO_DIR}/{name}.py",
        }
        found.append(with_verdict(record, c.verdict))
    return found

"""The operator signatures of ``operators.yaml``: which inputs, outputs, attributes and element
types each version of each covered operator has."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

@dataclass(frozen=True)
class Port:
    name: str
    type: str
    optional: bool = False
    positions_of: str | None = None
    # The attribute that picks the element type (OpenVINO's index_element_type): {name, default, types}
    type_attribute: dict | None = None


@dataclass(frozen=True)
class OpVersion:
    domain: str
    op: str
    version: int
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    attributes: dict[str, str]
    required: tuple[str, ...]
    types: dict[str, tuple[str, ...]]

    def port(self, name: str) -> Port | None:
        return next((p for p in self.inputs + self.outputs if p.name == name), None)

    def allowed(self, port: Port) -> tuple[str, ...]:
        return self.types[port.type]


@dataclass(frozen=True)
class Operator:
    domain: str
    name: str
    document: str
    versions: dict[int, OpVersion]
    layout: str = "channels_first"  # or channels_last: (N, spatial..., C)

    def all_attributes(self) -> set[str]:
        return {name for v in self.versions.values() for name in v.attributes}

    def all_ports(self) -> set[str]:
        return {p.name for v in self.versions.values() for p in v.inputs + v.outputs}


@cache
def operators() -> dict[tuple[str, str], Operator]:
    table = yaml.safe_load(Path(__file__).with_name("operators.yaml").read_text())
    found = {}
    for domain, ops in table.items():
        for name, spec in ops.items():
            versions = {
                int(version): OpVersion(
                    domain=domain,
                    op=name,
                    version=int(version),
                    inputs=tuple(Port(**p) for p in sig["inputs"]),
                    outputs=tuple(Port(**p) for p in sig["outputs"]),
                    attributes=dict(sig["attributes"]),
                    required=tuple(sig.get("required", ())),
                    types={k: tuple(v) for k, v in sig["types"].items()},
                )
                for version, sig in spec["versions"].items()
            }
            found[domain, name] = Operator(domain, name, spec["document"], versions, spec.get("layout", "channels_first"))
    return found

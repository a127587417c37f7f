"""Stage 1 of the pipeline: read case files, validate them, and say exactly where they are wrong.

Case files are data: they are read with PyYAML's safe loader only, checked against
``schema/cases.schema.json`` and then against the operator signatures. Every error names the
file, the line and the field.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import yaml

from .geometry_checks import check_attribute_values, check_geometry, pool_output_shape
from .limits import DEFAULT_LIMITS, FieldPath, Limits, ReadRefused, check_structure, format_path, read_text
from .operators import Operator, operators
from .parameters import ParameterError, instances

PACKAGE_DIR = Path(__file__).resolve().parent.parent
SCHEMA_DIR = PACKAGE_DIR / "schema"
REGISTRY_FILE = "ambiguities.yaml"
DEFAULT_DOMAIN = "ai.onnx"
CASE_SUFFIXES = (".yaml", ".yml")
MAX_MESSAGE = 500  # characters of an error message shown: a value quoted in it may be huge
# libyaml's parser, where PyYAML has it: several times faster than the pure-Python one
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

class CaseError(Exception):
    """A case file is malformed."""

    def __init__(self, file: Path, line: int, field_path: FieldPath | str, message: str):
        self.file, self.line, self.message = file, line, message
        self.field = field_path if isinstance(field_path, str) else format_path(field_path)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" {self.field}:" if self.field else ""
        message = self.message if len(self.message) <= MAX_MESSAGE else \
            f"{self.message[:MAX_MESSAGE]}... ({len(self.message):,} characters)"
        return escaped(f"{self.file}:{self.line}:{where} {message}")


def escaped(text: str) -> str:
    """``text`` on one line that says what it holds: a newline, a bidirectional override or any
    other unprintable character in a file name, key or value is shown as its escape, so that no
    name can fake a location or hide a character."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


# A terminal's escape sequences (CSI and OSC: colours, a screen clear, a window title), then any
# other C0 or C1 control (newline and tab kept) and the bidirectional overrides and isolates.
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x9b\x9d][^\x07]*?[@-~\x07]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """A runtime's text made safe to show: escape sequences and control characters removed (newlines
    and tabs kept), so that a message cannot clear a screen, retitle a window or reorder a line."""
    if text.isprintable():
        return text
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


@dataclass(frozen=True)
class Source:
    """A YAML document and where each of its fields sits."""

    file: Path
    data: Any
    lines: dict[FieldPath, int]

    def line(self, path: FieldPath) -> int:
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
            if end and path[:end - 1] + (str(path[end - 1]),) in self.lines:  # a key YAML read as a number
                return self.lines[path[:end - 1] + (str(path[end - 1]),)]
        return 1

    def error(self, path: FieldPath, message: str) -> CaseError:
        return CaseError(self.file, self.line(path), path, message)


def read_yaml(file: Path, schema_name: str, limits: Limits = DEFAULT_LIMITS) -> Source:
    """Parse ``file`` safely, within ``limits``, record the line of every field, and validate it
    against a schema."""
    try:
        text = read_text(file, limits)
        check_structure(text, limits)
    except ReadRefused as e:
        raise CaseError(file, e.line, e.field, e.message) from None
    try:
        root = _parsed(text, "compose")
        lines: dict[FieldPath, int] = {}
        if root is not None:
            _record_lines(file, root, (), lines)
        data = _parsed(text, "load")
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise CaseError(file, line, "", "YAML error: " + "; ".join(filter(None, [e.context, e.problem]))) from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow, e.g. NUL
        line = text.count("\n", 0, e.position) + 1
        raise CaseError(file, line, "", f"YAML error: unacceptable character #x{e.character:04x}") from None
    except yaml.YAMLError as e:
        raise CaseError(file, 1, "", f"YAML error: {e}") from None
    except (ValueError, TypeError, RecursionError) as e:  # a value PyYAML cannot build (an unhashable key...)
        raise CaseError(file, 1, "", f"YAML error: {type(e).__name__}: {e}") from None
    source = Source(file, data, lines)
    if data is None:
        raise CaseError(file, 1, "", "the file is empty")
    validate(source, (), data, _validator(schema_name))
    return source


def _parsed(text: str, parse: str) -> Any:
    """``yaml.compose`` or ``yaml.load`` of ``text``: by libyaml's parser where it succeeds (several
    times faster), else by PyYAML's own, whose error is the one reported, as it always was."""
    try:
        return getattr(yaml, parse)(text, Loader=_FAST_LOADER)
    except Exception:  # noqa: BLE001 - whatever libyaml's side refuses, PyYAML's words say why
        return getattr(yaml, parse)(text, Loader=yaml.SafeLoader)


def validate(source: Source, path: FieldPath, instance: Any, validator: jsonschema.Draft202012Validator) -> None:
    """Raise a CaseError naming the line and field of the most relevant schema violation."""
    if validator.is_valid(instance):  # the common case: no search for the most relevant error
        return
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    while error.validator in ("oneOf", "anyOf") and error.context:
        error = _closest_branch(error)
    path += tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        unknown = sorted((k for k in error.instance if k not in error.schema.get("properties", {})), key=str)
        raise source.error(path + (unknown[0],), f"unknown field {unknown[0]!r}")
    raise source.error(path, _schema_message(error))


def _record_lines(file: Path, node: yaml.Node, path: FieldPath, lines: dict[FieldPath, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                raise CaseError(file, key_node.start_mark.line + 1, path + (key,), f"duplicate key {key!r}")
            seen.add(key)
            lines[path + (key,)] = key_node.start_mark.line + 1
            _record_lines(file, value_node, path + (key,), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(file, item, path + (index,), lines)


def _closest_branch(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """Of the alternatives a value fails, one whose type it has explains it best (a list of
    strings fails as a list, not as a number); among those, the one it misses by the fewest errors."""
    branches: dict[int, list] = {}
    for sub in error.context:
        branches.setdefault(sub.schema_path[0], []).append(sub)
    of_its_type = [subs for subs in branches.values() if not any(s.validator == "type" and not s.path for s in subs)]
    closest = min(of_its_type or branches.values(), key=len)
    return jsonschema.exceptions.best_match(closest)


def _schema_message(error: jsonschema.ValidationError) -> str:
    if error.validator == "type":
        description = error.schema.get("description", "").split(". ")[0].rstrip(".")
        return f"must be of type {error.validator_value}" + (f": {description}" if description else "")
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    if error.validator == "oneOf" and all(set(option) == {"required"} for option in error.validator_value):
        names = [name for option in error.validator_value for name in option["required"]]
        return f"needs exactly one of {', '.join(names)}"
    if error.validator in ("oneOf", "anyOf"):
        return "matches none of the accepted forms of this field (see conformance/schema)"
    if error.validator == "maxLength":  # jsonschema's message quotes the whole string
        return f"is {len(error.instance):,} characters long; at most {error.validator_value}"
    if error.validator == "minItems":  # jsonschema's own wording changes between its versions
        return "must not be empty" if error.validator_value == 1 else f"needs at least {error.validator_value} items"
    return error.message


@cache
def _schema(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text())


@cache
def _validator(name: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    """The validator of a schema file, or of one of its ``$defs``: built once, as jsonschema
    resolves a schema's references anew for each validator (most of a case file's load time)."""
    schema = _schema(name)
    if definition is not None:
        schema = {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(schema)


@dataclass(frozen=True)
class Ambiguity:
    id: str
    title: str
    status: str  # open: tagged items are divergent; resolved: the tag informs only
    interpretations: dict[str, str]
    reference: str | None
    entry: dict


def load_registry(case_dir: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, Ambiguity]:
    """The bundled ambiguity registry, extended by ``case_dir``'s own if it has one."""
    registry = {}
    for directory in dict.fromkeys([bundled_case_dir(), case_dir]):
        file = directory / REGISTRY_FILE
        if not file.exists() and not file.is_symlink():
            continue
        source = read_yaml(file, "ambiguities.schema.json", limits)
        for key, entry in source.data.items():
            if entry.get("reference") and entry["reference"] not in entry["interpretations"]:
                raise source.error((key, "reference"), f"names no interpretation of {key}")
            registry[key] = Ambiguity(
                id=key,
                title=entry["title"],
                status=entry["status"],
                interpretations=entry["interpretations"],
                reference=entry.get("reference"),
                entry=entry,
            )
    return registry


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: str | None
    data: Any = None  # nested list, or None for a random input
    random: dict | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        if self.random is not None:
            return tuple(self.random["shape"])
        return np.shape(self.data)


@dataclass(frozen=True)
class OutputSpec:
    name: str
    dtype: str | None
    data: Any = None  # nested list, or None when derived
    shape: tuple[int, ...] | None = None  # a documented shape without values (derived, then checked)


@dataclass(frozen=True)
class Upstream:
    """A node whose outputs feed the case's operator (``feeds``: its output -> our input)."""

    op: str
    attributes: dict[str, Any]
    inputs: tuple[InputSpec, ...]
    feeds: dict[str, str]


@dataclass(frozen=True)
class Case:
    source: Source = field(repr=False)
    path: FieldPath
    op: str
    domain: str
    name: str
    description: str
    provenance: dict
    versions: dict | list | None
    dtypes: list[str] | str | None
    attributes: dict[str, Any]
    inputs: tuple[InputSpec, ...]
    outputs: tuple[OutputSpec, ...]
    reject: str | None
    ambiguity: Ambiguity | None
    expected_reading: str | None  # the reading the case's outputs follow
    erratum: dict | None
    upstream: Upstream | None = None
    derived_from: str | None = None  # file:line of the case this one runs for another operator
    # How the model declares its inputs' shapes: "declared" (every dimension) or "symbolic" (a named
    # parameter for each dimension: the rank is known, the sizes are not; onnx.checker requires a
    # shape), so that a runtime's run-time checks are reached, not only its load-time shape inference
    input_shapes: str = "declared"


    @property
    def file(self) -> Path:
        return self.source.file

    @property
    def line(self) -> int:
        return self.source.line(self.path)

    def error(self, subpath: FieldPath, message: str) -> CaseError:
        return self.source.error(self.path + subpath, message)


def load_case_file(file: Path, registry: dict[str, Ambiguity], limits: Limits = DEFAULT_LIMITS) -> list[Case]:
    source = read_yaml(file, "cases.schema.json", limits)
    domain = source.data.get("domain", DEFAULT_DOMAIN)
    operator = operators().get((domain, source.data["op"]))
    if operator is None:
        known = ", ".join(sorted(f"{d}:{o}" for d, o in operators()))
        raise source.error(("op",), f"unknown operator {domain}:{source.data['op']} (known: {known})")
    case_schema = _validator("cases.schema.json", "case")
    cases, names = [], set()
    for index, raw in enumerate(source.data["cases"]):
        path = ("cases", index)
        if raw["name"] in names:
            raise source.error(path + ("name",), f"duplicate case name {raw['name']!r}")
        names.add(raw["name"])
        try:
            expanded = instances(raw, limits)
        except ParameterError as e:
            raise source.error(path + e.path, str(e)) from None
        for name, instance in expanded:
            try:
                validate(source, path, instance, case_schema)
                cases.append(build_case(source, path, name, instance, operator, registry, limits))
            except CaseError as e:
                if name != raw["name"]:
                    e.message = f"instance {name}: {e.message}"
                raise
    if "derive" in source.data:
        cases += _derived_cases(source, operator, registry, names, limits)
    return cases


def _derived_cases(source: Source, operator: Operator, registry: dict[str, Ambiguity], own: set[str],
                   limits: Limits) -> list[Case]:
    """The cases of the files named in ``derive``, for ``operator``, where they can apply."""
    derive = source.data["derive"]
    documented = derive.get("documented", {})
    examples = documented.get("examples", {})
    found = []
    for index, name in enumerate(derive["files"]):
        # Only a case file beside this one: a path elsewhere (/etc/passwd, ../x.yaml, a symlink
        # out) is refused before it is read.
        other = source.file.parent / name
        beside = Path(name).name == name and other.suffix in CASE_SUFFIXES \
            and other.resolve().parent == source.file.resolve().parent
        if not beside:
            raise source.error(("derive", "files", index),
                               f"names {name!r}: derive takes the names of case files (*.yaml) beside this one")
        if not other.is_file() or other.resolve() == source.file.resolve():
            raise source.error(("derive", "files", index), f"no other case file {name} beside {source.file.name}")
        if "derive" in read_yaml(other, "cases.schema.json", limits).data:
            raise source.error(("derive", "files", index), f"{name} derives cases itself: derive from the originals")
        for case in load_case_file(other, registry, limits):
            if case.name.split("/")[0] in own:
                raise source.error(("derive", "files", index), f"{name} has a case {case.name.split('/')[0]}, as this file does")
            derived = _derive(case, operator)
            if derived is not None:
                if case.name in examples:
                    derived = dataclasses.replace(derived, provenance={"document": documented["document"], **examples[case.name]})
                found.append(derived)
    for name in examples:
        if not any(case.name == name for case in found):
            raise source.error(("derive", "documented", "examples", name), f"no derived case is named {name}")
    return found


def _derive(case: Case, operator: Operator) -> Case | None:
    """``case`` for ``operator``, or None where its attributes, ports or versions do not exist there."""
    versions = case.versions
    if isinstance(versions, list):
        versions = [v for v in versions if v in operator.versions]
        if not versions:
            return None
    ports = operator.all_ports()
    if (not case.reject and set(case.attributes) - operator.all_attributes()) or case.upstream is not None \
            or any(spec.name not in ports for spec in case.inputs + case.outputs):
        return None
    return dataclasses.replace(case, op=operator.name, domain=operator.domain, versions=versions,
                               derived_from=f"{case.file.name}:{case.line}")


def build_case(source: Source, path: FieldPath, case_name: str, raw: dict, operator: Operator,
                registry: dict[str, Ambiguity], limits: Limits) -> Case:
    def error(subpath: FieldPath, message: str) -> CaseError:
        return source.error(path + subpath, message)

    upstream = _check_names(raw, operator, error)
    inputs = _inputs(raw, upstream, limits, error)
    outputs = _outputs(raw, limits, error)
    ambiguity, expected_reading = _ambiguity(raw, registry, error)
    if "erratum" in raw:
        for name in raw["erratum"]["printed"]:
            if name not in raw.get("outputs", {}):
                raise error(("erratum", "printed", name), f"the case has no output {name!r}")
    _check_geometry(operator, raw, inputs, upstream, limits, error)

    return Case(
        source=source, path=path, op=operator.name, domain=operator.domain, name=case_name,
        description=raw["description"], provenance=raw["provenance"], versions=raw.get("versions"),
        dtypes=raw.get("dtypes"), attributes=raw.get("attributes", {}), inputs=inputs,
        outputs=outputs, reject=raw.get("reject"), ambiguity=ambiguity,
        expected_reading=expected_reading, erratum=raw.get("erratum"), upstream=upstream,
        input_shapes=raw.get("input_shapes", "declared"),
    )


def _check_names(raw: dict, operator: Operator, error) -> Upstream | None:
    """Every attribute, input, output and version the case names exists in the operator (an
    attribute only where the case expects outputs: a must-reject case may name a wrong one).
    Returns the parsed upstream node, if any."""
    input_ports = {p.name for v in operator.versions.values() for p in v.inputs}
    output_ports = {p.name for v in operator.versions.values() for p in v.outputs}
    if raw.get("reject") is None:
        for name in raw.get("attributes", {}):
            if name not in operator.all_attributes():
                raise error(("attributes", name), f"{operator.name} has no attribute {name!r} at any version")
    for name in raw.get("inputs", {}):
        if name not in input_ports:
            raise error(("inputs", name), f"{operator.name} has no input {name!r}")
    upstream = _upstream(raw["upstream"], operator, input_ports, error) if "upstream" in raw else None
    for index, name in enumerate(raw.get("outputs", {})):
        if name not in output_ports:
            where: FieldPath = ("outputs", index) if isinstance(raw["outputs"], list) else ("outputs", name)
            raise error(where, f"{operator.name} has no output {name!r}")
    versions = raw.get("versions")
    for i, version in enumerate(versions if isinstance(versions, list) else (versions or {}).values()):
        if version not in operator.versions:
            where = ("versions", i) if isinstance(versions, list) else ("versions",)
            raise error(where, f"{operator.name} has no version {version} (it has {sorted(operator.versions)})")
    return upstream


def _inputs(raw: dict, upstream: Upstream | None, limits: Limits, error) -> tuple[InputSpec, ...]:
    """The case's input specs, each within the limits and of its declared shape; the upstream
    node's inputs are checked the same way."""
    inputs = tuple(_input(name, spec) for name, spec in raw.get("inputs", {}).items())
    for spec in inputs + (upstream.inputs if upstream else ()):
        where = (("inputs",) if spec in inputs else ("upstream", "inputs")) + (spec.name,)
        field = ("random", "shape") if spec.random is not None else ("data",)
        if spec.data is not None:
            _check_nesting(spec.data, limits, lambda message: error(where + field, message))
        declared = (raw.get("inputs", {}) if spec in inputs else raw["upstream"]["inputs"])[spec.name].get("shape")
        if declared is not None and list(spec.shape) != declared:
            raise error(where + ("data",), f"the data has shape {list(spec.shape)}, not the declared {declared}")
        if len(spec.shape) > limits.rank:
            raise error(where + field, limits.exceeded("rank", len(spec.shape), "dimensions"))
        size = math.prod(spec.shape)
        if size > limits.elements:
            raise error(where + field, limits.exceeded("elements", size, "input elements"))
        distribution = spec.random["distribution"] if spec.random else None
        if isinstance(distribution, dict) and "distinct" in distribution:  # drawn from a permutation of the range
            low, high = distribution["distinct"]
            if high - low + 1 > limits.elements:
                raise error(where + ("random", "distribution"),
                            limits.exceeded("elements", high - low + 1, "integers in the distinct range"))
    return inputs


def _outputs(raw: dict, limits: Limits, error) -> tuple[OutputSpec, ...]:
    raw_outputs = raw.get("outputs", {})
    if isinstance(raw_outputs, list):  # a must-reject case names the node's outputs only
        outputs = tuple(OutputSpec(name, None) for name in raw_outputs)
    else:
        outputs = tuple(_output(name, spec) for name, spec in raw_outputs.items())
    for spec in outputs:
        if spec.data is not None:
            _check_nesting(spec.data, limits, lambda message: error(("outputs", spec.name, "data"), message))
    return outputs


def _ambiguity(raw: dict, registry: dict[str, Ambiguity], error) -> tuple[Ambiguity | None, str | None]:
    """The registry entry the case is tagged with and the reading it expects (the reference's
    unless the tag names another)."""
    if "ambiguity" not in raw:
        return None, None
    tag = raw["ambiguity"] if isinstance(raw["ambiguity"], dict) else {"id": raw["ambiguity"]}
    ambiguity = registry.get(tag["id"])
    if ambiguity is None:
        raise error(("ambiguity",), f"no ambiguity {tag['id']!r} in the registry {REGISTRY_FILE}")
    expected_reading = tag.get("expected_reading", ambiguity.reference)
    if expected_reading not in ambiguity.interpretations:
        raise error(("ambiguity", "expected_reading"), f"{ambiguity.id} has no interpretation {expected_reading!r}")
    return ambiguity, expected_reading


def _check_geometry(operator: Operator, raw: dict, inputs: tuple[InputSpec, ...], upstream: Upstream | None,
                    limits: Limits, error) -> None:
    """Budgets for every case; a valid geometry for a case that expects outputs. The upstream
    node comes first: its output shapes are the shapes of the inputs it feeds."""
    nodes: list[tuple[FieldPath, str, str, Any, tuple[InputSpec, ...]]] = [
        ((), operator.domain, operator.name, raw.get("attributes", {}), inputs)]
    if upstream is not None:
        nodes.insert(0, (("upstream",), operator.domain, upstream.op, upstream.attributes, upstream.inputs))
    fed: dict[str, tuple[int, ...]] = {}
    for where, domain, op, attributes, specs in nodes:
        check_attribute_values(attributes, where + ("attributes",), error)
        output_shape = next((s.data for s in specs if s.name == "output_shape" and s.data is not None), None)
        fields = {s.name: where + ("inputs", s.name) + (("random", "shape") if s.random else ("data",)) for s in specs}
        shapes = {**fed, **{s.name: tuple(s.shape) for s in specs}}
        check_geometry(domain, op, attributes, shapes, output_shape if isinstance(output_shape, list) else None,
                       "reject" not in raw, limits, where + ("attributes",),
                       lambda port: fields.get(port, ("upstream", "attributes")), error)
        if where == ("upstream",) and "X" in shapes:
            produced = pool_output_shape(domain, op, attributes, shapes["X"])
            fed = {consumed: produced for consumed in upstream.feeds.values()} if produced and upstream else {}


def _upstream(raw: dict, operator: Operator, input_ports: set[str], error) -> Upstream:
    feeder = operators().get((operator.domain, raw["op"]))
    if feeder is None:
        raise error(("upstream", "op"), f"unknown operator {operator.domain}:{raw['op']}")
    for name in raw["attributes"]:
        if name not in feeder.all_attributes():
            raise error(("upstream", "attributes", name), f"{feeder.name} has no attribute {name!r} at any version")
    for name in raw["inputs"]:
        if name not in {p.name for v in feeder.versions.values() for p in v.inputs}:
            raise error(("upstream", "inputs", name), f"{feeder.name} has no input {name!r}")
    for produced, consumed in raw["feeds"].items():
        if produced not in {p.name for v in feeder.versions.values() for p in v.outputs}:
            raise error(("upstream", "feeds", produced), f"{feeder.name} has no output {produced!r}")
        if consumed not in input_ports:
            raise error(("upstream", "feeds", produced), f"{operator.name} has no input {consumed!r}")
    inputs = tuple(_input(name, spec) for name, spec in raw["inputs"].items())
    return Upstream(feeder.name, raw["attributes"], inputs, dict(raw["feeds"]))


def _input(name: str, spec: dict) -> InputSpec:
    return InputSpec(name, spec.get("dtype"), spec.get("data"), spec.get("random"))


def _output(name: str, spec: Any) -> OutputSpec:  # "derived", or a mapping the schema checked
    if spec == "derived":
        return OutputSpec(name, None)
    if "shape" in spec:
        return OutputSpec(name, None, shape=tuple(spec["shape"]))
    return OutputSpec(name, spec.get("dtype"), spec["data"])


def _check_nesting(data: Any, limits: Limits, error) -> None:
    """Raise ``error(message)`` unless ``data`` is a number or regular nested lists of at most
    ``limits.rank`` levels."""
    depth, level = 0, data
    while isinstance(level, list) and level:
        depth, level = depth + 1, level[0]
    if depth > limits.rank:
        raise error(limits.exceeded("rank", depth, "levels of nested lists (dimensions)"))
    try:
        np.array(data, dtype=np.float64)
    except (ValueError, OverflowError):
        raise error("the nested lists are ragged: every row needs the same length") from None


def bundled_case_dir() -> Path:
    """The cases shipped with the suite: the wheel's copy, else ``cases/`` of the source checkout."""
    installed = PACKAGE_DIR / "bundled_cases"
    return installed if installed.is_dir() else PACKAGE_DIR.parent / "cases"


def case_files(case_dir: Path) -> list[Path]:
    """Every ``*.yaml`` and ``*.yml`` under ``case_dir`` but the registry, whatever it is: a
    directory, FIFO or device so named is refused by the loader, in one line."""
    found = (p for suffix in CASE_SUFFIXES for p in case_dir.rglob("*" + suffix))
    return sorted(p for p in found if p.name != REGISTRY_FILE)

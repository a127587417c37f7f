"""A JSON Schema validator compiled to closures, for the suite's own schemas and the documents
it reads back (a results.json of 50,000 records): every record checked, in a fraction of a
second where ``jsonschema`` takes seconds. It knows the keywords those schemas use and refuses
any other when compiling, so a schema cannot grow a rule that is silently not checked.
``tests/test_untrusted_state.py`` holds it to ``jsonschema``'s verdicts.
"""

from __future__ import annotations

import re
from typing import Any, Callable

Check = Callable[[Any, str], "str | None"]  # (value, where) -> the first problem, or None

TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "format"}  # format is not asserted (as jsonschema)


def compile_schema(schema: dict[str, Any]) -> Check:
    definitions = schema.get("$defs", {})
    compiled: dict[str, Check] = {}

    def reference(name: str) -> Check:
        def check(value: Any, where: str) -> str | None:
            return compiled[name](value, where)
        return check

    def build(node: dict[str, Any]) -> Check:
        unknown = set(node) - ANNOTATIONS - set(KEYWORDS)
        if unknown:
            raise ValueError(f"schema keyword(s) {sorted(unknown)} are not checked by schema_check")
        checks = [KEYWORDS[key](node, build, reference) for key in node if key in KEYWORDS]
        if len(checks) == 1:
            return checks[0]

        def check(value: Any, where: str) -> str | None:
            for one in checks:
                problem = one(value, where)
                if problem:
                    return problem
            return None
        return check

    for name, node in definitions.items():
        compiled[f"#/$defs/{name}"] = build(node)
    return build(schema)


def _at(where: str) -> str:
    return where.lstrip("/") or "the document"


def _type(node, build, reference) -> Check:
    names = node["type"] if isinstance(node["type"], list) else [node["type"]]
    tests = [TYPES[n] for n in names]
    if len(tests) == 1:
        [test] = tests
        return lambda v, where: None if test(v) else f"{_at(where)}: is not of type {names[0]}"
    return lambda v, where: None if any(t(v) for t in tests) else f"{_at(where)}: is not of type {' or '.join(names)}"


def _properties(node, build, reference) -> Check:
    checks = {key: build(sub) for key, sub in node["properties"].items()}

    def check(value, where):
        if isinstance(value, dict):
            for key, one in checks.items():
                if key in value and (problem := one(value[key], f"{where}/{key}")):
                    return problem
        return None
    return check


def _additional(node, build, reference) -> Check:
    known = set(node.get("properties", {}))
    extra = node["additionalProperties"]
    sub = build(extra) if isinstance(extra, dict) else None

    def check(value, where):
        if not isinstance(value, dict):
            return None
        for key in value:
            if key in known:
                continue
            if extra is False:
                return f"{_at(where)}: {str(key)[:40]!r} is not allowed"
            if sub is not None and (problem := sub(value[key], f"{where}/{key}")):
                return problem
        return None
    return check


def _required(node, build, reference) -> Check:
    names = node["required"]

    def check(value, where):
        if isinstance(value, dict):
            missing = [n for n in names if n not in value]
            return f"{_at(where)}: {missing[0]!r} is a required property" if missing else None
        return None
    return check


def _items(node, build, reference) -> Check:
    each = build(node["items"])

    def check(value, where):
        if isinstance(value, list):
            for index, element in enumerate(value):
                if problem := each(element, f"{where}/{index}"):
                    return problem
        return None
    return check


def _enum(node, build, reference) -> Check:
    options = node["enum"]
    return lambda v, where: None if any(v == o and type(v) is type(o) for o in options) else \
        f"{_at(where)}: {str(v)[:40]!r} is not one of {options}"


def _const(node, build, reference) -> Check:
    wanted = node["const"]
    return lambda v, where: None if v == wanted and type(v) is type(wanted) else f"{_at(where)}: must be {wanted!r}"


def _ref(node, build, reference) -> Check:
    return reference(node["$ref"])


def _one_of(node, build, reference) -> Check:
    options = [build(sub) for sub in node["oneOf"]]

    def check(value, where):
        matched = sum(1 for one in options if one(value, where) is None)
        return None if matched == 1 else f"{_at(where)}: matches {matched} of the oneOf alternatives, not one"
    return check


def _bound(name: str, holds: Callable[[Any, Any], bool], applies: Callable[[Any], bool]) -> Callable:
    def keyword(node, build, reference) -> Check:
        limit = node[name]
        return lambda v, where: None if not applies(v) or holds(v, limit) else f"{_at(where)}: breaks {name} {limit}"
    return keyword


def _pattern(node, build, reference) -> Check:
    pattern = re.compile(node["pattern"])
    return lambda v, where: None if not isinstance(v, str) or pattern.search(v) else \
        f"{_at(where)}: does not match {node['pattern']!r}"


KEYWORDS: dict[str, Callable[..., Check]] = {
    "type": _type, "properties": _properties, "additionalProperties": _additional, "required": _required,
    "items": _items, "enum": _enum, "const": _const, "$ref": _ref, "oneOf": _one_of, "pattern": _pattern,
    "minItems": _bound("minItems", lambda v, n: len(v) >= n, lambda v: isinstance(v, list)),
    "minLength": _bound("minLength", lambda v, n: len(v) >= n, lambda v: isinstance(v, str)),
    "minimum": _bound("minimum", lambda v, n: v >= n, lambda v: type(v) in (int, float)),
}

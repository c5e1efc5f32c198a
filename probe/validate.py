"""A small JSON Schema (draft 2020-12) validator for the keywords the report schema uses.

The probe must stay stdlib-only, so it cannot depend on ``jsonschema``. This validator implements
``type``, ``properties``, ``required``, ``additionalProperties``, ``patternProperties``, ``items``,
``enum``, ``const``, ``minimum``, ``maximum``, ``minItems``, ``maxItems``, ``maxProperties``,
``minLength``, ``pattern``, ``$ref`` (to ``#/$defs/…``), ``anyOf`` and ``oneOf``, with 2020-12 semantics
(an integral float is an ``integer``; booleans are not numbers). Annotation keywords (``title``,
``description``, ``$comment``, ``$id``, ``$schema``, ``$defs``, ``examples``, ``default``, ``format``) are
ignored. Any other keyword is rejected when the schema is loaded, so the schema cannot silently outgrow the
validator.

Errors name the JSON path of the offending value, like ``jsonschema``'s ``json_path``:
``$.gpus[2].pcie.current_width: expected integer or null, got string``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SUPPORTED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "maxProperties",
    "minLength",
    "pattern",
    "$ref",
    "anyOf",
    "oneOf",
}
ANNOTATIONS = {"title", "description", "$comment", "$id", "$schema", "$defs", "examples", "default", "format"}


@dataclass(frozen=True)
class ValidationError:
    """One failure: ``path`` is the instance location (``$.a[0].b``), ``message`` says what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise ValueError(f"unknown type {name!r} in schema")


_PLAIN_KEY_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")


def _child(path: str, key: str | int) -> str:
    """Extend a JSON path the way jsonschema's ``json_path`` does (``.name``, ``[0]``, ``['0']``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY_RE.match(key):
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{escaped}']"


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if _is_num(a) and _is_num(b):
        return a == b
    return type(a) is type(b) and a == b


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_keywords(schema: Any, where: str = "#") -> None:
    """Raise ValueError if the schema uses a keyword this validator does not implement."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError(f"{where}: schema must be an object or boolean")
    for key, value in schema.items():
        if key not in SUPPORTED and key not in ANNOTATIONS:
            raise ValueError(f"{where}: unsupported keyword {key!r}")
        if key in ("properties", "patternProperties", "$defs"):
            for name, sub in value.items():
                check_keywords(sub, f"{where}/{key}/{name}")
        elif key in ("items", "additionalProperties"):
            check_keywords(value, f"{where}/{key}")
        elif key in ("anyOf", "oneOf"):
            for i, sub in enumerate(value):
                check_keywords(sub, f"{where}/{key}/{i}")


class Validator:
    """Validate instances against one root schema (which holds the ``$defs``)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        check_keywords(schema)
        self.root = schema
        self._patterns: dict[str, re.Pattern[str]] = {}

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref are supported, got {ref!r}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _re(self, pattern: str) -> re.Pattern[str]:
        if pattern not in self._patterns:
            self._patterns[pattern] = re.compile(pattern)
        return self._patterns[pattern]

    def errors(self, instance: Any, schema: Any = None, path: str = "$") -> list[ValidationError]:
        """All validation errors of ``instance`` (empty list when valid)."""
        out: list[ValidationError] = []
        self._validate(instance, self.root if schema is None else schema, path, out)
        return out

    def is_valid(self, instance: Any, schema: Any = None) -> bool:
        return not self.errors(instance, schema)

    def _validate(self, inst: Any, schema: Any, path: str, out: list[ValidationError]) -> None:
        if schema is True:
            return
        if schema is False:
            out.append(ValidationError(path, "no value is allowed here"))
            return
        if "$ref" in schema:
            self._validate(inst, self._resolve(schema["$ref"]), path, out)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_is_type(inst, t) for t in types):
                out.append(ValidationError(path, f"expected {' or '.join(types)}, got {_type_name(inst)}"))
                return  # the remaining keywords would only repeat the type error
        if "const" in schema and not _equal(inst, schema["const"]):
            out.append(ValidationError(path, f"expected {schema['const']!r}, got {inst!r}"))
        if "enum" in schema and not any(_equal(inst, v) for v in schema["enum"]):
            out.append(ValidationError(path, f"{inst!r} is not one of {schema['enum']!r}"))
        if _is_num(inst):
            if "minimum" in schema and inst < schema["minimum"]:
                out.append(ValidationError(path, f"{inst!r} is less than the minimum {schema['minimum']!r}"))
            if "maximum" in schema and inst > schema["maximum"]:
                out.append(
                    ValidationError(path, f"{inst!r} is greater than the maximum {schema['maximum']!r}")
                )
        if isinstance(inst, str):
            if "minLength" in schema and len(inst) < schema["minLength"]:
                out.append(ValidationError(path, f"string shorter than {schema['minLength']} characters"))
            if "pattern" in schema and not self._re(schema["pattern"]).search(inst):
                out.append(ValidationError(path, f"{inst!r} does not match pattern {schema['pattern']!r}"))
        if isinstance(inst, list):
            if "minItems" in schema and len(inst) < schema["minItems"]:
                out.append(
                    ValidationError(path, f"expected at least {schema['minItems']} items, got {len(inst)}")
                )
            if "maxItems" in schema and len(inst) > schema["maxItems"]:
                out.append(
                    ValidationError(path, f"expected at most {schema['maxItems']} items, got {len(inst)}")
                )
            if "items" in schema:
                for i, item in enumerate(inst):
                    self._validate(item, schema["items"], _child(path, i), out)
        if isinstance(inst, dict):
            self._validate_object(inst, schema, path, out)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                matches = sum(1 for sub in schema[key] if not self.errors(inst, sub, path))
                if key == "anyOf" and matches == 0:
                    out.append(ValidationError(path, "does not match any of the allowed schemas (anyOf)"))
                elif key == "oneOf" and matches != 1:
                    out.append(
                        ValidationError(path, f"matches {matches} schemas of oneOf, expected exactly 1")
                    )

    def _validate_object(
        self, inst: dict[str, Any], schema: dict[str, Any], path: str, out: list[ValidationError]
    ) -> None:
        if "maxProperties" in schema and len(inst) > schema["maxProperties"]:
            bound = schema["maxProperties"]
            out.append(ValidationError(path, f"expected at most {bound} properties, got {len(inst)}"))
        for name in schema.get("required", []):
            if name not in inst:
                out.append(ValidationError(path, f"required property {name!r} is missing"))
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = []
        for name, value in inst.items():
            matched = False
            if name in props:
                matched = True
                self._validate(value, props[name], _child(path, name), out)
            for pattern, sub in patterns.items():
                if self._re(pattern).search(name):
                    matched = True
                    self._validate(value, sub, _child(path, name), out)
            if not matched:
                extra.append(name)
        additional = schema.get("additionalProperties", True)
        if extra and additional is False:
            out.append(ValidationError(path, f"unexpected properties {sorted(extra)!r}"))
        elif extra and isinstance(additional, dict):
            for name in extra:
                self._validate(inst[name], additional, _child(path, name), out)


def validate(instance: Any, schema: dict[str, Any]) -> list[ValidationError]:
    """Convenience wrapper: validate ``instance`` against ``schema``."""
    return Validator(schema).errors(instance)

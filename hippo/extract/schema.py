"""The JSON schema an `llm` extractor must answer with, and a small validator for it.

The same schema is sent as the request's `response_format` and checked here, because an
OpenAI-compatible server may ignore structured output. The validator covers the subset
of JSON Schema the schema uses (type, properties, required, additionalProperties, items,
enum, minimum/maximum, minLength/maxLength, minItems/maxItems); no dependency needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TYPES = ("rule", "decision", "preference", "task", "todo", "fact", "tool", "config",
         "procedure", "architecture", "people", "insight")
MAX_TEXT = 1000
MAX_TAGS = 8
MAX_MEMORIES = 50

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["memories"],
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": MAX_MEMORIES,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "text", "importance", "tags", "evidence"],
                "properties": {
                    "type": {"type": "string", "enum": list(TYPES)},
                    "text": {"type": "string", "minLength": 8, "maxLength": MAX_TEXT},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                    "tags": {"type": "array", "maxItems": MAX_TAGS,
                             "items": {"type": "string", "minLength": 1, "maxLength": 40}},
                    "evidence": {"type": "array", "minItems": 1, "maxItems": 20,
                                 "items": {"type": "integer", "minimum": 1}},
                },
            },
        },
    },
}

_KINDS: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "number": (int, float), "integer": (int,), "null": (type(None),),
}


def _is(value: Any, kind: str) -> bool:
    if kind in ("number", "integer") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _KINDS[kind])


def errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every way `value` breaks `schema`, as `path: problem` lines (empty when valid)."""
    kind = schema.get("type")
    if kind is not None and not _is(value, kind):
        return [f"{path}: expected {kind}, got {type(value).__name__}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {', '.join(map(str, schema['enum']))}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        out += _number(value, schema, path)
    if isinstance(value, str):
        out += _string(value, schema, path)
    if isinstance(value, list):
        out += _array(value, schema, path)
    if isinstance(value, dict):
        out += _object(value, schema, path)
    return out


def _number(value: float, schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if "minimum" in schema and value < schema["minimum"]:
        out.append(f"{path}: {value} is below {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        out.append(f"{path}: {value} is above {schema['maximum']}")
    return out


def _string(value: str, schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if len(value.strip()) < schema.get("minLength", 0):
        out.append(f"{path}: shorter than {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        out.append(f"{path}: longer than {schema['maxLength']} characters")
    return out


def _array(value: list[Any], schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if len(value) < schema.get("minItems", 0):
        out.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        out.append(f"{path}: more than {schema['maxItems']} items")
    if "items" in schema:
        for i, item in enumerate(value):
            out += errors(item, schema["items"], f"{path}[{i}]")
    return out


def _object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    props = schema.get("properties", {})
    out = [f"{path}: missing {k!r}" for k in schema.get("required", []) if k not in value]
    if schema.get("additionalProperties") is False:
        out += [f"{path}: unexpected {k!r}" for k in value if k not in props]
    for key, sub in props.items():
        if key in value:
            out += errors(value[key], sub, f"{path}.{key}")
    return out


def check(answer: str, allowed_evidence: Iterable[int]) -> tuple[list[dict[str, Any]], list[str]]:
    """Parse and validate a model's answer: (memories, []) when valid, else ([], problems).

    Evidence must name chunks the model was shown; anything invalid rejects the whole
    answer, so nothing half-parsed is ever stored.
    """
    import orjson

    try:
        data = orjson.loads(answer)
    except orjson.JSONDecodeError as exc:
        return [], [f"not JSON: {exc}"]
    problems = errors(data, SCHEMA)
    if problems:
        return [], problems[:10]
    allowed = set(allowed_evidence)
    for i, mem in enumerate(data["memories"]):
        unknown = [e for e in mem["evidence"] if e not in allowed]
        if unknown:
            problems.append(f"$.memories[{i}].evidence: chunk(s) {unknown} are not in this "
                            f"transcript")
    if problems:
        return [], problems[:10]
    return data["memories"], []

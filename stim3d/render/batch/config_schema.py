"""The JSON Schema of a batch config, with every registered family's parameters: for YAML language servers.

`stim3d schema --config > stim3d-config.schema.json`, then point the editor at it (for
the YAML language server: `# yaml-language-server: $schema=stim3d-config.schema.json` as a
config's first line). A task's `family` is an enum of the registered families (plug-ins
included), and for each family an `if`/`then` pair types its `params` (the family's own
model: ranges, defaults, descriptions), `grid` (a list of such values per parameter) and
`variants`. Built from the same pydantic models that validate a config, so the editor and
`stim3d validate` agree.

A plug-in's params model that pydantic cannot write as JSON Schema (a field typed as a
callable, an arbitrary class) does not take the schema down with it: that family's
params are left open (any object) and it is listed under `x-stim3d-not-described` with
the reason, and `stim3d families --json` says the same; every other family is described.
"""

from __future__ import annotations

import json
from typing import Any

from stim3d.render.batch.config import BatchConfig
from stim3d.scenes.families import FAMILIES

NOT_DESCRIBED = "x-stim3d-not-described"  # {family: why its params have no schema}


class NotDescribed(Exception):
    """A family's params model has no JSON Schema; the message says why (one line)."""


def params_schema(model: Any, ref_template: str = "#/$defs/{model}") -> dict[str, Any]:
    """`model.model_json_schema()`, or NotDescribed naming why pydantic (or the plug-in's own code) could not."""
    try:
        return model.model_json_schema(ref_template=ref_template)
    except Exception as exc:  # a plug-in's model: any error it raises is that family's, not the schema's
        reason = (str(exc).strip().splitlines() or [""])[0]
        raise NotDescribed(f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__) from None


def family_params_schema(name: str, defs: dict[str, Any]) -> dict[str, Any]:
    """The family's params model as a schema; its sub-models go into `defs` under `<family>.<Model>`.

    NotDescribed when the model has no JSON Schema (nothing is added to `defs` then).
    """
    schema = params_schema(FAMILIES[name].params_model, f"#/$defs/{name}.{{model}}")
    for model_name, definition in schema.pop("$defs", {}).items():
        defs[f"{name}.{model_name}"] = definition
    return schema


def config_schema() -> dict[str, Any]:
    """The config's JSON Schema (draft 2020-12, as pydantic writes it) with per-family parameter schemas."""
    schema = BatchConfig.model_json_schema()
    defs = schema["$defs"]
    task = defs["TaskConfig"]
    names = sorted(FAMILIES)
    task["properties"]["family"] = {"title": "Family", "type": "string", "enum": names,
                                    "description": "a registered task family (`stim3d families`)"}
    rules = []
    not_described: dict[str, str] = {}
    for name in names:
        try:
            params = family_params_schema(name, defs)
        except NotDescribed as exc:
            not_described[name] = str(exc)
            params = {}
        fields = params.get("properties", {})
        partial: dict[str, Any] = {"type": "object", "properties": fields, "additionalProperties": False}
        description = FAMILIES[name].description
        if name in not_described:  # open: the editor cannot check what it cannot describe
            partial = {"type": "object"}
            description += f"; params NOT DESCRIBED: {not_described[name]}"
        rules.append({
            "if": {"properties": {"family": {"const": name}}, "required": ["family"]},
            "then": {"properties": {
                "params": {**partial, "description": description},
                "grid": {"type": "object", "additionalProperties": name in not_described,
                         "properties": {k: {"type": "array", "minItems": 1, "items": v} for k, v in fields.items()}},
                "variants": {"type": "object", "additionalProperties": partial},
            }},
        })
    task["allOf"] = rules
    schema["title"] = "stim3d batch config"
    if not_described:
        schema[NOT_DESCRIBED] = not_described
    return schema


def config_schema_text() -> str:
    return json.dumps(config_schema(), indent=2, sort_keys=True) + "\n"

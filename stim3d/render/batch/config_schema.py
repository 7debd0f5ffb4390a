"""The JSON Schema of a batch config, with every registered family's parameters: for YAML language servers.

`stim3d schema --config > stim3d-config.schema.json`, then point the editor at it (for
the YAML language server: `# yaml-language-server: $schema=stim3d-config.schema.json` as a
config's first line). A task's `family` is an enum of the registered families (plug-ins
included), and for each family an `if`/`then` pair types its `params` (the family's own
model: ranges, defaults, descriptions), `grid` (a list of such values per parameter) and
`variants`. Built from the same pydantic models that validate a config, so the editor and
`stim3d validate` agree.
"""

from __future__ import annotations

import json
from typing import Any

from stim3d.render.batch.config import BatchConfig
from stim3d.scenes.families import FAMILIES


def family_params_schema(name: str, defs: dict[str, Any]) -> dict[str, Any]:
    """The family's params model as a schema; its sub-models go into `defs` under `<family>.<Model>`."""
    schema = FAMILIES[name].params_model.model_json_schema(ref_template=f"#/$defs/{name}.{{model}}")
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
    for name in names:
        params = family_params_schema(name, defs)
        fields = params.get("properties", {})
        partial = {"type": "object", "properties": fields, "additionalProperties": False}
        rules.append({
            "if": {"properties": {"family": {"const": name}}, "required": ["family"]},
            "then": {"properties": {
                "params": {**partial, "description": FAMILIES[name].description},
                "grid": {"type": "object", "additionalProperties": False,
                         "properties": {k: {"type": "array", "minItems": 1, "items": v} for k, v in fields.items()}},
                "variants": {"type": "object", "additionalProperties": partial},
            }},
        })
    task["allOf"] = rules
    schema["title"] = "stim3d batch config"
    return schema


def config_schema_text() -> str:
    return json.dumps(config_schema(), indent=2, sort_keys=True) + "\n"

"""A plug-in family whose params pydantic cannot describe as JSON Schema: `stim3d schema --config` and
`stim3d families --json` list it as NOT DESCRIBED, with the reason, and still describe every other family."""

from __future__ import annotations

import json

from tests.plugin_support import family_module, install, stim3d

UNDESCRIBABLE = '''

from collections.abc import Callable


class HookParams(Params):
    hook: Callable[[int], int] = Field(abs, description="a function: pydantic has no JSON Schema for it")


FAMILY = Family("hooked", "spheres with a hook", HookParams, compose, ("integer",))
'''


def test_a_params_model_without_json_schema_is_not_described_and_the_rest_are(tmp_path):
    site = tmp_path / "site"
    install(site, "hooked-plugin", {"hooked": family_module("hooked") + UNDESCRIBABLE},
            {"stim3d.families": {"hooked": "hooked"}})
    install(site, "good-plugin", {"good_row": family_module("good_row")}, {"stim3d.families": {"good_row": "good_row"}})

    result = stim3d("schema", "--config", site=site, cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    schema = json.loads(result.stdout)
    reason = schema["x-stim3d-not-described"]["hooked"]
    assert list(schema["x-stim3d-not-described"]) == ["hooked"] and "Callable" in reason
    assert result.stderr.strip().splitlines() == [
        f"stim3d: warning: family hooked: params NOT DESCRIBED ({reason}); the schema leaves them open"]
    rules = {r["if"]["properties"]["family"]["const"]: r["then"]["properties"]["params"]
             for r in schema["$defs"]["TaskConfig"]["allOf"]}
    assert rules["hooked"]["description"] == f"spheres with a hook; params NOT DESCRIBED: {reason}"
    assert "properties" not in rules["hooked"]  # left open: any params object
    assert rules["good_row"]["properties"]["n"]["maximum"] == 4  # a plug-in that can be described is
    assert "max_instances" in rules["shape_count"]["properties"]  # and so is every built-in family

    result = stim3d("families", "--json", site=site, cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["hooked"]["params"] is None and rows["hooked"]["params_error"] == f"NOT DESCRIBED: {reason}"
    assert rows["good_row"]["params"]["n"]["default"] == 2 and rows["shape_count"]["params"]

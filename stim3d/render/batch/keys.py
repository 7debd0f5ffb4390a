"""Every resume key in one place: the hash that says whether an item folder on disk is the one a run would make,
and the check that a folder's recorded code is this code (`code_mismatch`).

A folder counts as done only when the key stored in its item.json (`provenance.item_key`)
equals the key computed here (`render/batch/folder.py`, `BatchFolder.state`). Each key
covers the code that makes the item (stim3d version and the family's generator
revision), so an upgrade re-renders instead of keeping old files.

The bytes each function hashes are kept exactly as they were when the keys lived in
driver.py, sweep/run.py and stim3d/api.py: folders rendered by earlier releases still
resume without a re-render (tests/test_fixture_resume.py).
"""

from __future__ import annotations

import hashlib
import json

from stim3d.render.batch.config import BatchConfig
from stim3d.render.batch.plan import ItemPlan, expand
from stim3d.render.provenance import code_identity
from stim3d.render.settings import RenderSettings
from stim3d.scenes.model import Item


def _short(payload: str) -> str:
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def item_key(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> str:
    """A batch item: its family, parameters, entropy, split, render settings (the task's own sampling over the
    batch's, so a task without it keeps the key it always had) and the code that makes it."""
    payload = {"family": plan.family, "params": plan.params, "entropy": [batch_seed, plan.task_index, plan.item_index],
               "split": plan.split, "render": plan.settings(settings).model_dump(mode="json"),
               "code": code_identity({plan.family}, with_commit=False)}
    if plan.questions != ("default",):  # only then: keys of items without a describe question stay as they were
        payload["questions"] = list(plan.questions)
    if plan.look is not None:  # a task's or variant's own look (render.look is in "render" already)
        payload["look"] = plan.look
    return _short(json.dumps(payload, sort_keys=True, default=str))


def expected_keys(config: BatchConfig, plans: list[ItemPlan] | None = None) -> dict[str, str]:
    """item_id -> item_key for the planned items (all of the config's when `plans` is None)."""
    return {plan.item_id: item_key(plan, config.seed, config.render) for plan in (plans or expand(config))}


def level_key(item: Item, settings: RenderSettings) -> str:
    """A sweep level: its item before rendering, the settings and the code (render/sweep/run.py)."""
    return _short(item.to_json() + json.dumps(settings.model_dump(mode="json"), sort_keys=True)
                  + json.dumps(code_identity({item.family}, with_commit=False), sort_keys=True))


def composed_item_key(item: Item, settings: RenderSettings) -> str:
    """An item handed to `stim3d.render_items`: the whole item but its provenance, the settings and the code."""
    payload = {"item": item.model_dump(mode="json", exclude={"provenance"}), "render": settings.model_dump(mode="json"),
               "code": code_identity({item.family}, with_commit=False)}
    return _short(json.dumps(payload, sort_keys=True))


def code_mismatch(previous: dict, code: dict) -> str | None:
    """Why a folder's recorded code differs from this one's (version or a generator revision), or None."""
    recorded = previous.get("code")
    if not isinstance(recorded, dict):
        return "a stim3d that did not record its generator revisions"
    if {k: recorded.get(k) for k in code} == code:
        return None
    revisions = ", ".join(f"{k} {v}" for k, v in (recorded.get("generator_revisions") or {}).items())
    return f"stim3d {recorded.get('stim3d_version')} (generator revisions: {revisions or 'none'})"

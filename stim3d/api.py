"""The public Python API: compose items, render them or a config into a batch folder, read a batch back.

These are the calls the `stim3d` command makes; a notebook or a benchmark's own
pipeline uses them the same way. Nothing here prints or exits: errors are
exceptions carrying one-line messages (`ConfigError`, `FamilyError`,
`InfeasibleError`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from stim3d.render.batch.composed import ComposedPlan, render_composed
from stim3d.render.batch.config import BatchConfig, ConfigError, load_config, parse_config
from stim3d.render.batch.driver import ProgressFn, Shard
from stim3d.render.batch.driver import render_batch as _render_batch
from stim3d.render.batch.executors import Executor
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.keys import composed_item_key
from stim3d.render.batch.reading import Batch, load_batch
from stim3d.render.batch.summary import BatchReport
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families import FAMILIES, Family
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item


def families() -> dict[str, Family]:
    """Every registered family (built-in and plug-ins), by name.

    Returns
    -------
    dict of str to Family
        Each family's name, description, parameter model, `compose` function, answer types and
        generator revision; `stim3d families` prints their parameters with defaults and ranges.
    """
    return dict(FAMILIES)


def compose(
    family: str,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    *,
    width: int = 640,
    height: int = 480,
    item_id: str | None = None,
    split: str = "test",
    task_index: int = 0,
    item_index: int = 0,
    rays_per_pixel: int = 1,
    questions: Sequence[str] = ("default",),
) -> Item:
    """Compose and measure one item (no rendering): scene, per-object ground truth, questions with gold answers.

    Parameters
    ----------
    family : str
        A registered family name (`families()`).
    params : mapping, optional
        The family's parameters; missing ones take their defaults, unknown ones are an error.
    seed, task_index, item_index : int
        The item's random stream is `SeedSequence([seed, task_index, item_index])`: a batch
        with `seed: S` makes item i of task t from (S, t, i), so these three numbers
        reproduce any batch item exactly.
    width, height : int
        The image the camera is built for.
    item_id, split : str, optional
        Recorded in the item; `item_id` defaults to `<family>-seed<seed>`.
    rays_per_pixel : int
        Rays per pixel side for visibility (1 = through pixel centres, as the renderer samples masks).
    questions : sequence of str
        Question sets, as a config task's `questions:`: "default" (the family's own) and/or
        "describe" (a free-form description scored by a rubric, docs/rubrics.md).

    Returns
    -------
    Item
        The composed item; `provenance` is None until it is rendered.

    Raises
    ------
    FamilyError
        Unknown family.
    pydantic.ValidationError
        Parameters outside the family's ranges.
    InfeasibleError
        The constraints cannot be met for this seed (the message names the constraint).
    ConfigError
        An argument of the wrong type or out of range (a negative or fractional seed, `params`
        not a mapping, `questions` a string, `rays_per_pixel` outside 1-8).
    """
    if params is not None and not isinstance(params, Mapping):
        raise ConfigError(f"params: expected a mapping of parameter names to values, got {type(params).__name__}")
    args = ComposeArgs.checked(seed=seed, task_index=task_index, item_index=item_index, width=width, height=height,
                               rays_per_pixel=rays_per_pixel)
    seed, task_index, item_index = args.seed, args.task_index, args.item_index
    width, height, rays_per_pixel = args.width, args.height, args.rays_per_pixel
    if isinstance(questions, str) or not isinstance(questions, Sequence):
        raise ConfigError(f"questions = {questions!r}: expected a list of question sets, e.g. ['default', 'describe']")
    return make_item(family, dict(params or {}), [int(seed), int(task_index), int(item_index)],
                     item_id or f"{family}-seed{seed}", Frame(width, height, rays_per_pixel), split,
                     question_sets=tuple(questions))


def render_batch(
    config: str | Path | Mapping[str, Any] | BatchConfig,
    out: str | Path,
    *,
    workers: int | None = None,
    force: bool = False,
    shard: str | None = None,
    executor: Executor = "local",
    address: str | None = None,
    progress: ProgressFn | None = None,
    item_timeout: float | None = None,
) -> BatchReport:
    """Render a config (a YAML path, a dict or a `BatchConfig`) into the batch folder `out`.

    The same resumable driver as `stim3d render`: worker processes with crash
    isolation, items published atomically, a rerun renders only what is missing,
    records.jsonl and summary.json at the end. Local workers are spawned, so a
    script that calls this must do so under `if __name__ == "__main__":`.

    Parameters
    ----------
    config : str, Path, mapping or BatchConfig
        The batch config (docs/configs.md).
    out : str or Path
        The batch folder; created if missing, resumed if it holds this config's items.
    workers : int, optional
        Local worker processes (default 1) or Ray actors (default: as many as fit the cluster).
    force : bool
        Re-render a folder made from another config or by another generator revision.
    shard : str, optional
        ``"k/n"``: render only the k-th of n slices of the item plan (merge with `stim3d merge`).
    executor : {"local", "ray"}
        Where items render.
    address : str, optional
        The Ray cluster to join (``HEAD:6379``); a local Ray when omitted.
    progress : callable, optional
        Called with a `ProgressEvent` at the start and after every item.
    item_timeout : float, optional
        Seconds one item may take; its worker is then killed and the item retried once, then reported
        failed, so a hung render cannot hold the batch (default: no limit).

    Returns
    -------
    BatchReport
        Counts (rendered, skipped, failed with reasons), seconds per item and constant baselines.

    Raises
    ------
    ConfigError
        A bad config, or a folder made from another config or another generator revision (unless `force`).
    """
    if isinstance(config, BatchConfig):
        parsed = config
    elif isinstance(config, Mapping):
        parsed = parse_config(dict(config))
    elif isinstance(config, (str, Path)):
        parsed = load_config(config)
    else:
        raise ConfigError(f"config: expected a YAML path, a mapping or a BatchConfig, got {type(config).__name__}")
    return _render_batch(parsed, Path(out), force=force, progress=progress, workers=workers,
                         shard=Shard.parse(shard) if shard else None, executor=executor, address=address,
                         item_timeout=item_timeout)


def render_items(
    items: Iterable[Item],
    out: str | Path,
    settings: RenderSettings | Mapping[str, Any] | None = None,
    *,
    workdir: str | Path | None = None,
) -> list[Path]:
    """Render already composed (or hand-edited) items in this process into the batch folder `out`.

    Each item goes through the same code as a batch item (`render_item`: backend,
    measured colours, provenance, atomic item folder), and records.jsonl is rebuilt
    from the folder's items. An item whose folder is done by the batch's own rule
    (`BatchFolder.state`: files matching their checksums, rendered from the same item
    and settings by the same stim3d version and generator revision) is skipped, so a
    rerun resumes. The camera size is the item's own; `settings` gives the engine,
    samples and the rest. The folder is locked for the call, like a batch render.

    Parameters
    ----------
    items : iterable of Item
        Composed items (`compose`) or items read back and edited.
    out : str or Path
        The batch folder the item folders and records.jsonl go to.
    settings : RenderSettings or mapping, optional
        Engine, samples, denoising and the rest (docs/configs.md); defaults otherwise.
    workdir : str or Path, optional
        Scratch space for the renderer's pass files (default: ``out/.work``, removed when empty).

    Returns
    -------
    list of Path
        The item folders, in the order given.

    Raises
    ------
    ConfigError
        An item that is not valid as it stands (every item is validated again on entry:
        an `item_id` edited to ``'../x'`` after compose is refused before anything is
        written), or a symbolic link inside `out` (docs/hardening.md).
    FolderLocked
        Another stim3d run holds `out`.
    """
    out = Path(out)
    base = settings if isinstance(settings, RenderSettings) else RenderSettings.model_validate(dict(settings or {}))
    checked = [_revalidated(item, n) for n, item in enumerate(items)]
    folders = [BatchFolder(out).item_dir(item.item_id) for item in checked]  # every id checked before anything is written
    plan = ComposedPlan([(item, base.model_copy(update={"width": item.scene.camera.width,
                                                         "height": item.scene.camera.height})) for item in checked],
                        key=composed_item_key, records="folder")
    render_composed(plan, out, in_process=True, scratch=Path(workdir) if workdir is not None else None)
    return folders


def _revalidated(item: Any, number: int) -> Item:
    """The item validated again: pydantic does not validate on assignment, so an id edited to '../x' after
    compose (or set by `model_copy(update=...)`) is caught here, before it becomes a path."""
    if not isinstance(item, Item):
        raise ConfigError(f"items[{number}]: expected an Item (from stim3d.compose), got {type(item).__name__}")
    try:
        return Item.model_validate_json(item.to_json())
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(f"items[{number}] ({item.item_id!r}): {'.'.join(map(str, error['loc']))}: "
                          f"{error['msg']}") from None


__all__ = ["Batch", "compose", "families", "load_batch", "render_batch", "render_items"]


def _whole(value: Any) -> Any:
    """A whole number as an int (numpy's too); bools and floats refused: 1.7 would be truncated without a word."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PydanticCustomError("whole", "expected a whole number, got {kind}", {"kind": type(value).__name__})
    return int(value)


Whole = Annotated[int, BeforeValidator(_whole)]


class ComposeArgs(BaseModel):
    """`compose`'s numeric arguments, validated in one place; the image's ranges are RenderSettings' own."""

    model_config = ConfigDict(extra="forbid")
    seed: Whole = Field(ge=0)
    task_index: Whole = Field(ge=0)
    item_index: Whole = Field(ge=0)
    width: Annotated[Whole, *RenderSettings.model_fields["width"].metadata]
    height: Annotated[Whole, *RenderSettings.model_fields["height"].metadata]
    rays_per_pixel: Annotated[Whole, *RenderSettings.model_fields["rays_per_pixel"].metadata]

    @classmethod
    def checked(cls, **values: Any) -> ComposeArgs:
        """The arguments, or ConfigError naming the first bad one: `width = 4: must be at least 8`."""
        try:
            return cls(**values)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = str(error["loc"][0])
            bounds = [m for m in cls.model_fields[name].metadata if hasattr(m, "ge") or hasattr(m, "le")]
            least = next((m.ge for m in bounds if getattr(m, "ge", None) is not None), None)
            most = next((m.le for m in bounds if getattr(m, "le", None) is not None), None)
            if error["type"] == "whole":
                why = error["msg"]
            elif error["type"] == "less_than_equal":
                why = f"must be {least}-{most}"
            else:
                why = f"must be at least {least}"
            raise ConfigError(f"{name} = {values[name]!r}: {why}") from None

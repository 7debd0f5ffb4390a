"""The batch config (YAML): validated before anything renders, expanded into a deterministic item plan.

```yaml
seed: 7
render: {engine: cycles, width: 640, height: 480, samples: 64, denoise: true}
tasks:
  - family: shape_count
    count: 120                 # items, spread evenly over the grid
    grid: {n_shape_types: [1, 2, 3, 4, 5], min_visibility: [0.7, 0.8, 0.9, 0.99]}
    params: {max_instances: 3} # fixed parameters for every item of the task
```
Grid combinations are assigned round-robin (item i gets combination i mod G), so
every combination gets count/G items, +-1.

A task may ask for distribution-matched splits instead of one `split` and `count`:
`splits: {train: 3000, val: 300, test: 600}`. Each split is planned like a task of
its own over the same grid (round-robin from the first combination, answers
scheduled per split), so every split is drawn from the same parameter distribution;
item indices run on across the splits, so their seeds, and so their scenes, are
disjoint. Item ids name the split: `<family>-t<task>-<split>-<index>`.

A task may render with its own sampling: `render: {samples: 8, denoise_quality:
balanced}` over the batch's `render:` (TaskRender), so one batch of several families
gives each the cheapest setting measured for it (scenes/presets/rubrics3d.yaml). So may
a look: `looks: {photoreal: {samples: 32, denoise_quality: high}}` gives every item
rendered in photoreal the sampling that look needs to meet the quality bar
(docs/looks_cost.md), over a task's own `render:` (measured for studio).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import reprlib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from stim3d.errors import ConfigError
from stim3d.render.batch.config_yaml import read_yaml
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families import FamilyError, get_family
from stim3d.scenes.model import ADDED, LOOK_NAMES, LookName, leave_out_added_defaults
from stim3d.scenes.names import SplitName

VARIANT_NAME = re.compile(r"[a-z0-9_]{1,20}")
LOOK_KEY = "look"  # a variant override that picks the look instead of a family parameter
MAX_ITEMS = 1_000_000  # items (variants included) one config may plan; the largest preset plans 2,000 (rose3d)
MAX_COMBINATIONS = 100_000  # grid combinations of one task; each is validated against the family before rendering
SHOWN = 80  # characters of a value echoed into an error line

_REPR = reprlib.Repr()  # bounded in depth, items and length whatever the value holds
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 4, 6, SHOWN, SHOWN, 40


def shown(value: Any) -> str:
    """A value as an error line echoes it: repr bounded in time and cut to SHOWN characters, however large it is."""
    text = _REPR.repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def split_look(overrides: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A variant's overrides without `look`, and the look it names (None when it names none)."""
    return {k: v for k, v in overrides.items() if k != LOOK_KEY}, overrides.get(LOOK_KEY)



class TaskRender(BaseModel):
    """A task's or a look's own sampling over the batch's `render:`. Only how Cycles samples and denoises: size,
    engine, device and look stay the batch's (a look has its own task field), so every item of a batch is framed,
    validated and scheduled alike and only its noise budget differs."""

    model_config = ConfigDict(extra="forbid")

    samples: int | None = Field(None, ge=1, le=65536, strict=True)
    denoise: bool | None = Field(None, strict=True)
    denoise_quality: Literal["high", "balanced", "fast"] | None = None
    light_tree: bool | None = Field(None, strict=True)
    adaptive_sampling: bool | None = Field(None, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _only_sampling(cls, data: Any) -> Any:
        if isinstance(data, dict):
            other = [str(k) for k in data if k not in cls.model_fields]
            if other:
                raise ValueError(f"a task's or look's render sets only {', '.join(cls.model_fields)}; "
                                 f"{', '.join(map(shown, other))} belong(s) in the batch's render")
        return data

    def overrides(self) -> dict[str, Any]:
        """The fields the task sets: what it changes in the batch's settings."""
        return self.model_dump(exclude_none=True)


class TaskConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    family: str
    count: int | None = Field(None, ge=1, le=1_000_000, strict=True)  # strict: `count: true` is not 1
    splits: Annotated[dict[SplitName, int], ADDED] = Field(
        default_factory=dict,
        description="distribution-matched splits, name -> item count (e.g. train: 3000, test: 600): same grid and "
        "answer balance per split, disjoint seeds; replaces `split` (and `count`, which is then their total)",
    )
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    split: SplitName = "test"
    variants: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="renders of the same composed scene: name -> parameter overrides; every variant of an item "
        "uses the item's seed, so the scenes differ only by what the overrides change (they share a scene_id)",
    )
    look: Annotated[LookName | None, ADDED] = Field(
        None, description="the task's look (studio, clevr, photoreal, photoreal_raw); default: render.look. A variant may set "
        "`look:` among its overrides, so one scene renders in several looks with a shared scene_id")
    render: Annotated[TaskRender | None, ADDED] = Field(
        None, description="the task's own samples, denoise, denoise_quality, light_tree and adaptive_sampling "
        "over the batch's render (the rest stays the batch's)")
    looks: Annotated[dict[LookName, TaskRender], ADDED] = Field(
        default_factory=dict, description="the task's own sampling in a look, over the batch's `looks:` (a crowd "
        "of small objects needs more samples in photoreal than other scenes)")
    questions: Annotated[list[Literal["default", "describe"]], ADDED] = Field(
        default_factory=lambda: ["default"], min_length=1,  # type: ignore[arg-type]
        description="question sets of every item: default (the family's own questions) and/or describe "
        "(a free-form description scored by a rubric from the ground truth, docs/rubrics.md)",
    )

    @field_validator("questions")
    @classmethod
    def _distinct_question_sets(cls, questions: list[str]) -> list[str]:
        if len(set(questions)) != len(questions):
            raise ValueError(f"questions {questions}: name each question set once")
        return questions

    @model_serializer(mode="wrap")
    def _leave_out_added_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Older configs keep their content hash: the rule of scenes/model.py `AddedIn`."""
        return leave_out_added_defaults(self, handler(self))

    @field_validator("splits")
    @classmethod
    def _split_counts(cls, splits: dict[str, int]) -> dict[str, int]:
        for name, n in splits.items():
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 1_000_000:
                raise ValueError(f"split {name!r}: {n!r} items; give a whole number from 1 to 1000000")
        return splits

    @model_validator(mode="after")
    def _count_or_splits(self) -> TaskConfig:
        if not self.splits:
            if self.count is None:
                raise ValueError("give count (items of the task) or splits ({train: n, test: m})")
            return self
        if self.split != "test":  # the default; a dumped config repeats it
            raise ValueError(f"give split {self.split!r} or splits {dict(self.splits)}, not both")
        total = sum(self.splits.values())
        if self.count is not None and self.count != total:
            raise ValueError(f"count {self.count} is not the splits' total {total}; leave count out")
        self.count = total
        return self

    def split_counts(self) -> list[tuple[str, int]]:
        """(split, items) in plan order: the task's splits, or its one split with its count."""
        return list(self.splits.items()) or [(self.split, int(self.count or 0))]

    @field_validator("variants")
    @classmethod
    def _variant_names(cls, variants: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, overrides in variants.items():
            if not VARIANT_NAME.fullmatch(name):
                raise ValueError(f"variant name {name!r}: use 1-20 characters of a-z, 0-9 and _")
            if LOOK_KEY in overrides and overrides[LOOK_KEY] not in LOOK_NAMES:
                raise ValueError(f"variant {name!r}: look {overrides[LOOK_KEY]!r}; allowed: {', '.join(LOOK_NAMES)}")
        return variants

    @field_validator("family")
    @classmethod
    def _known_family(cls, name: str) -> str:
        try:  # an unknown name, or a plug-in that failed to load: named with its load error
            get_family(name)
        except FamilyError as exc:
            raise ValueError(str(exc)) from None
        return name

    @field_validator("grid")
    @classmethod
    def _non_empty_axes(cls, grid: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in grid.items():
            if not values:
                raise ValueError(f"grid axis {shown(key)} has no values")
        combinations = math.prod(len(values) for values in grid.values())
        if combinations > MAX_COMBINATIONS:
            raise ValueError(f"the grid has {combinations} combinations; at most {MAX_COMBINATIONS} are allowed")
        return grid

    def combinations(self) -> list[dict[str, Any]]:
        keys = list(self.grid)
        return [
            {**self.params, **dict(zip(keys, values))}
            for values in itertools.product(*(self.grid[k] for k in keys))
        ]


class BatchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = Field(0, ge=0, le=2**63 - 1, strict=True)
    render: RenderSettings = Field(default_factory=RenderSettings)
    tasks: list[TaskConfig] = Field(min_length=1)
    mesh_roots: Annotated[list[str], ADDED] = Field(
        default_factory=list, description="folders a family may read mesh files from besides the config's own "
        "(relative ones against the config's folder; docs/objects.md)")
    looks: Annotated[dict[LookName, TaskRender], ADDED] = Field(
        default_factory=dict, description="each look's own sampling over the batch's render, for every item rendered "
        "in it, over a task's own render (measured for studio): what the look needs to meet the quality bar "
        "(docs/looks_cost.md)")
    _folder: str | None = PrivateAttr(None)  # the config file's folder (load_config); not part of the content

    @model_serializer(mode="wrap")
    def _leave_out_added_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Older configs keep their content hash: the rule of scenes/model.py `AddedIn`."""
        return leave_out_added_defaults(self, handler(self))

    def folder(self) -> Path:
        """The folder relative paths are read against: the config file's (the working folder for a config given
        as data)."""
        return Path(self._folder) if self._folder else Path.cwd()

    def mesh_root_paths(self) -> tuple[str, ...]:
        """The folders mesh files may come from, absolute: the config's folder and `mesh_roots`."""
        return tuple(dict.fromkeys(str((self.folder() / root).resolve()) for root in (".", *self.mesh_roots)))

    @model_validator(mode="after")
    def _capped_total(self) -> BatchConfig:
        total = sum(int(task.count or 0) * max(1, len(task.variants)) for task in self.tasks)
        if total > MAX_ITEMS:
            raise ValueError(f"the tasks plan {total} items in total (counts times variants); at most {MAX_ITEMS} "
                             "are allowed per config: split it into several configs")
        return self

    def content_hash(self) -> str:
        """Hash of everything that determines the items' files (used to refuse mixing configs)."""
        # Key order is kept: the order of grid axes decides which item gets which combination.
        canonical = json.dumps(self.model_dump(mode="json"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _format_error(source: str, error: Mapping[str, Any], prefix: str = "") -> str:
    loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in error["loc"]).replace(".[", "[")
    where = f"{prefix}{loc}" if loc else prefix.rstrip(".") or "config"
    value = error.get("input")
    echoed = "" if isinstance(value, dict) else f" = {shown(value)}"
    message = error["msg"].removeprefix("Value error, ")
    if isinstance(value, str) and len(value) > SHOWN:  # a validator that echoes the whole value
        message = message.replace(value, value[:SHOWN - 3] + "...")
    if len(message) > 12 * SHOWN:  # a backstop for any other long echo; a list of allowed names fits
        message = message[:12 * SHOWN - 3] + "..."
    return f"{source}: {shown(where)[1:-1] if len(where) > SHOWN else where}{echoed}: {message}"


def parse_config(data: Any, source: str = "config") -> BatchConfig:
    """Validate a loaded YAML document, including every grid combination's family parameters.

    Every problem pydantic finds is reported at once: ConfigError's message has one line per
    problem (the CLI prints them all), so a user fixes a config in one round, not one per run."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping with 'tasks' (got {type(data).__name__})")
    try:
        config = BatchConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(dict.fromkeys(_format_error(source, e) for e in exc.errors()))) from None
    problems: list[str] = []
    for t, task in enumerate(config.tasks):
        family = get_family(task.family)
        for key in task.grid:
            if key in task.params:
                problems.append(f"{source}: tasks[{t}]: {key!r} is both in grid and params; keep one")
        variants = [{**combination, **split_look(overrides)[0]} for combination in task.combinations()
                    for overrides in (task.variants or {"": {}}).values()]
        for combination in variants:
            try:
                family.params_model.model_validate(combination)
            except ValidationError as exc:
                for error in exc.errors():
                    section = "grid" if error["loc"] and error["loc"][0] in task.grid else "params"
                    if error["type"] == "extra_forbidden":  # the name is wrong whatever its value: one line per name
                        allowed = ", ".join(family.params_model.model_fields)
                        msg = (f"{source}: tasks[{t}].{section}.{error['loc'][0]}: not a parameter of {task.family} "
                               f"(its parameters: {allowed})")
                    else:
                        msg = _format_error(source, error, prefix=f"tasks[{t}].{section}.")
                    problems.append(msg)
    if problems:
        raise ConfigError("\n".join(dict.fromkeys(problems)))  # one line each, a grid's repeats once
    return config


def load_config(path: str | Path) -> BatchConfig:
    """Read and validate a YAML config; `-` reads standard input. ConfigError (one line) for anything wrong."""
    import sys

    if str(path) == "-":
        raw, path = sys.stdin.buffer.read(), Path("<stdin>")
    else:
        path = Path(path)
        if path.is_dir():
            raise ConfigError(f"{path}: is a folder; give the config's YAML file")
        if not path.exists():  # a device or pipe (/dev/stdin, <(...)) is read like a file
            raise ConfigError(f"{path}: no such config file")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the config as UTF-8") from None
    try:
        data = read_yaml(text, str(path))
    except RecursionError:
        raise ConfigError(f"{path}: lists or mappings nested too deeply to read; a config needs a few levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())  # a reader error spans lines
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    config = parse_config(data, str(path))
    if str(path) != "<stdin>":
        config._folder = str(Path(path).resolve().parent)
    missing = [f"{path}: mesh_roots[{i}] = {shown(root)}: no such folder (a relative one is read against the "
               "config's folder)" for i, root in enumerate(config.mesh_roots) if not (config.folder() / root).is_dir()]
    if missing:
        raise ConfigError("\n".join(missing))
    return config

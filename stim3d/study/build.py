"""`stim3d study build BATCH --out STUDY`: a rendered batch -> a self-contained static study folder.

The batch is read only through `load_batch` (its complete items and their records);
`--filter` is `stim3d eval --filter` (eval/run.py `select_records`, the gallery's
KEY=VALUE rule on an item's difficulty and parameters). Roles (practice, catch, main)
are chosen in select.py, trials made in trials.py, files written by package.py. The
output is deterministic: no clock, sorted listings, byte-for-byte copies, so the same
batch and options give byte-identical study.json and trials.json (and the same
study_id, a hash of the batch's identity, the options and the trials).

With `--staircase` (a sweep folder, docs/study_staircase.md) the sweep's questions
become `staircase` trials, with their golds (the page judges each answer to choose the
next level), and study.json gets `staircase` (staircase.py `staircase_manifest`).

Describe questions (a free description scored by a rubric) are left out unless
`include_describe`; a pilot build (`pilot`) carries every trial's gold for the page to show
its owner, and keeps the study id of the same study built for real (the id hashes the real
study's trials). `min_window` asks the page to hold participants until their window is at
least that large.

A rebuild (`--force`) replaces every generated file and keeps `data/` (collected
sessions) and `consent.html` (the owner's edited text). docs/study.md is the user's guide.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stim3d.study import package
from stim3d.study.contract import MANIFEST, PRIVATE, STUDY_FORMAT, TRIALS, Role, Trial, participant_plan
from stim3d.study.errors import StudyError
from stim3d.study.instructions import overview_pages
from stim3d.study.prompts import people_prompt
from stim3d.study.select import assign_roles
from stim3d.study.staircase import DEFAULT_TRIALS, MAX_TRIALS, guess_rate, staircase_manifest
from stim3d.study.trials import make_trial, stimulus_name

DEFAULT_MASK_MS = 500
MIN_WINDOW_RANGE = (200, 4000)  # CSS pixels: a phone held upright is 360-430 wide, a large monitor about 2500
DESCRIBE_LEFT_OUT = ("a free description is scored by a rubric of facts the person is never shown, so it measures "
                     "writing and guessing what counts more than seeing")


class BuildOptions(BaseModel):
    """What `stim3d study build` was asked; everything but `force` and `pilot` is recorded in study.json's options
    (`pilot` beside them, so that a pilot and the study built after it share their study id)."""

    model_config = ConfigDict(extra="forbid")
    per_participant: int | None = Field(None, ge=1)
    practice: int = Field(2, ge=0, le=50)
    catch: int = Field(2, ge=0, le=50)
    seed: int = 0
    filter: list[str] = Field(default_factory=list)
    present_ms: int | None = Field(None, ge=1, le=60_000)
    mask_ms: int | None = Field(None, ge=0, le=10_000)
    completion_url: str | None = None
    jatos: bool = False
    image_format: Literal["png"] = "png"
    staircase: bool = False
    staircase_trials: int | None = Field(None, ge=1, le=MAX_TRIALS)
    force: bool = False
    pilot: bool = False  # a try-out: the consent template may still be unedited, every gold shown after the answer
    include_describe: bool = False  # describe questions (rubric) too, each listing what its description must mention
    min_window: tuple[int, int] | None = None  # the page waits until the window is at least this wide and high

    @field_validator("min_window")
    @classmethod
    def _window(cls, size: tuple[int, int] | None) -> tuple[int, int] | None:
        low, high = MIN_WINDOW_RANGE
        if size is not None and not all(low <= v <= high for v in size):
            raise ValueError(f"width and height must each be {low}-{high} CSS pixels")
        return size

    @field_validator("completion_url")
    @classmethod
    def _web_address(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("https://", "http://")):
            raise ValueError("must be an http:// or https:// address")
        return url

    @model_validator(mode="after")
    def _staircase(self) -> BuildOptions:
        """--staircase-trials needs --staircase; a staircase sets its own trial count; practice and catch default to 0.

        A sweep's items are one scene at several levels: practice feedback would tell the
        answer of the scene the staircase then asks about, and each practice or catch item
        is one level fewer to ask, so both are opt-in with a staircase.
        """
        if self.staircase_trials is not None and not self.staircase:
            raise ValueError("`staircase_trials` needs `staircase`")
        if self.staircase and self.per_participant is not None:
            raise ValueError("`per_participant` does not apply with `staircase` (`staircase_trials` sets the steps)")
        if self.staircase:
            for name in ("practice", "catch"):
                if name not in self.model_fields_set:
                    setattr(self, name, 0)
        return self

    def recorded(self) -> dict[str, Any]:
        """study.json's options: the mask only means something with a presentation time."""
        mask = (self.mask_ms if self.mask_ms is not None else DEFAULT_MASK_MS) if self.present_ms else None
        recorded: dict[str, Any] = {
            "per_participant": self.per_participant, "practice": self.practice, "catch": self.catch, "seed": self.seed,
            "filter": list(self.filter), "present_ms": self.present_ms, "mask_ms": mask,
            "completion_url": self.completion_url, "jatos": self.jatos}
        if self.staircase:  # only then, so that a study without one keeps its study_id
            recorded["staircase_trials"] = self.staircase_trials or DEFAULT_TRIALS
        if self.include_describe:  # these two only when set, for the same reason
            recorded["include_describe"] = True
        if self.min_window is not None:
            recorded["min_window"] = list(self.min_window)
        return recorded


@dataclass
class BuildReport:
    study: Path
    study_id: str
    counts: dict[str, int]
    per_participant: int
    files: int
    bytes: int
    jzip: Path | None = None
    staircase: dict[str, Any] | None = None
    describe_left_out: int = 0  # describe questions not made trials (without include_describe)
    generic_prompts: dict[str, int] | None = None  # family -> trials shown the generic prompt (no people's prompt)
    pilot: bool = False

    def summary_lines(self) -> list[str]:
        c = self.counts
        lines = [f"study {self.study_id}: {c['main']} main, {c['practice']} practice, {c['catch']} catch trials "
                 f"-> {self.study}"]
        if self.describe_left_out:
            lines.append(f"left out {self.describe_left_out} describe question(s): {DESCRIBE_LEFT_OUT} "
                         "(`include_describe=True` keeps them)")
        for family, n in sorted((self.generic_prompts or {}).items()):
            lines.append(f"family {family}: {n} trial(s) show the question without the model's answer format "
                         "(no people's prompt for it in stim3d/study/prompts.py)")
        if self.pilot:
            lines.append("pilot: every trial's gold is in trials.json and shown after each answer; build without "
                         "`pilot=True` for the real study")
        if self.staircase is not None:
            levels = self.staircase["levels"]
            lines.append(f"staircase: {self.staircase['spec']['trials']} steps over {len(levels)} levels "
                         f"{levels[0]:g}-{levels[-1]:g} from {c['staircase']} trials of "
                         f"{len(self.staircase['sweeps'])} sweeps; their golds are in trials.json (the page judges "
                         "each answer)")
        lines += [f"each participant sees {self.per_participant} trials",
                 f"{self.files} files, {self.bytes / 1e6:.2f} MB to download"]
        if self.jzip is not None:
            lines.append(f"JATOS study archive: {self.jzip}")
        lines.append(f"next: stim3d study serve {self.study}")
        return lines


def _check_out(batch: Path, out: Path, force: bool) -> None:
    """Refuse an output that would overwrite the batch, sit inside its items, or clobber a folder by surprise."""
    b, o = batch.resolve(), out.resolve()
    if o == b or b in o.parents and (o.relative_to(b).parts[0] == "items") or o in b.parents:
        raise StudyError("the study must not be the batch, inside its items/ or around it; "
                         "choose a folder beside the batch", field="out", value=out)
    if o.exists() and not o.is_dir():
        raise StudyError("exists and is not a folder", field="out", value=out)
    if not o.is_dir() or not any(p.name != package.CONSENT for p in o.iterdir()):
        return  # new, empty, or holding only the consent template a refused first build wrote
    if not _is_study(o):  # --force too: a rebuild replaces stimuli/, lib/, js/ and css/ whole, someone else's included
        raise StudyError(f"the folder is not empty and is not a study (no stim3d {MANIFEST}); "
                         "choose a new or empty folder" + ("; `force=True` only rebuilds a study" if force else ""),
                         field="out", value=out)
    if not force:
        raise StudyError("already a study; `force=True` rebuilds it (keeping data/ and consent.html)", field="out",
                         value=out)


def _is_study(folder: Path) -> bool:
    """Whether `folder` holds a study.json that `stim3d study build` wrote (its format), the only folder --force
    may rebuild."""
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("format") == STUDY_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _load(batch: Path, filters: list[str]) -> tuple[Any, list[Any]]:
    """The batch and its selected records, through load_batch and eval's selection (one-line errors)."""
    from stim3d.eval.run import EvalError, select_records
    from stim3d.render.batch.config import ConfigError
    from stim3d.render.batch.reading import load_batch
    from stim3d.render.batch.selection import SelectionError, parse_filters

    if not batch.is_dir():
        raise StudyError(f"{batch}: no such batch folder")
    try:
        loaded = load_batch(batch)
        records = select_records(loaded, parse_filters(filters), None)
    except (ConfigError, EvalError, SelectionError) as exc:
        raise StudyError(str(exc).splitlines()[0]) from None
    if not records:
        raise StudyError(f"{batch}: no question is selected{' by ' + ' '.join(filters) if filters else ''}")
    return loaded, records


def _identity(batch: Path) -> dict[str, Any]:
    """batch.json's config hash and code identity (what made the images), or nulls for a batch without one."""
    from stim3d.render.batch.folder import BatchFolder

    manifest = BatchFolder(batch).manifest() or {}
    return {"config_hash": manifest.get("config_hash"), "code": manifest.get("code")}


def _sweep_records(batch: Path, records: list[Any]) -> list[Any]:
    """The records of the folder's sweeps (difficulty.sweep_id and sweep_level); StudyError when there are none."""
    def level(record: Any) -> Any:
        return record.difficulty.get("sweep_level")

    sweep = [r for r in records if isinstance(r.difficulty.get("sweep_id"), str)
             and isinstance(level(r), (int, float)) and not isinstance(level(r), bool)]
    if not sweep:
        raise StudyError(f"{batch} has no sweep (no record has difficulty.sweep_id and sweep_level); "
                         "make one with `stim3d sweep occlusion`", field="staircase")
    return sweep


def _staircase(sweep: list[Any], trials: list[Trial], options: BuildOptions) -> dict[str, Any]:
    """study.json's `staircase`: every rendered level of the sweeps, each with a staircase trial left to ask."""
    from stim3d.study.staircase import StaircaseError

    levels = sorted({float(r.difficulty["sweep_level"]) for r in sweep})
    asked = {float(t.difficulty["sweep_level"]) for t in trials if t.role == "staircase"}
    lost = [level for level in levels if level not in asked]
    if lost:
        raise StudyError(f"every trial of level {lost[0]:g} went to practice or catch trials; "
                         "ask for fewer (`practice=0` `catch=0`) or use a folder with more sweeps", field="staircase")
    staircase = [t for t in trials if t.role == "staircase"]
    guess = min(guess_rate(t.answer_type, t.options) for t in staircase)  # mixed types: the most cautious
    try:
        return staircase_manifest(trials, {"levels": levels, "guess": guess,
                                           "trials": options.staircase_trials or DEFAULT_TRIALS})
    except StaircaseError as exc:
        raise StudyError(str(exc), field="staircase") from None


def _json_bytes(payload: Any) -> bytes:
    return (json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode("utf-8")


class UneditedConsent(StudyError):
    """The study's consent page is still the shipped template, and the study is not a pilot."""

    def __init__(self, path: Path, placeholders: list[str]) -> None:
        self.path, self.placeholders = path, placeholders
        super().__init__(f"{path}: the consent template is not edited (it still has {', '.join(placeholders)}); "
                         "replace it with your approved text and build again, or build a pilot (pilot)")


def _check_consent(out: Path, template: bytes, pilot: bool) -> None:
    """UneditedConsent unless `pilot` or out/consent.html is edited. Why: participants would agree to a page that
    names no duration and no researcher. A first build writes the template there, for the owner to edit."""
    consent = out / package.CONSENT
    text = consent.read_text(encoding="utf-8", errors="replace") if consent.is_file() else template.decode("utf-8")
    found = package.consent_placeholders(text)
    if pilot or not found:
        return
    if not consent.is_file():
        out.mkdir(parents=True, exist_ok=True)
        package.write_file(consent, template)
    raise UneditedConsent(consent, found)


def build_study(batch: Path, out: Path, options: BuildOptions) -> BuildReport:
    """Write the study folder `out` from the batch folder `batch` (module docstring); returns what was written."""
    from stim3d.version import __version__

    batch, out = Path(batch), Path(out)
    loaded, records = _load(batch, options.filter)
    _check_out(loaded.folder, out, options.force)
    if options.staircase:
        records = _sweep_records(batch, records)
    describe = [] if options.include_describe else [r for r in records if r.answer.type == "rubric"]
    if describe:
        records = [r for r in records if r.answer.type != "rubric"]
        if not records:
            raise StudyError(f"{batch}: every selected question is a describe question, left out of people's "
                             "studies by default; include_describe keeps them")
    items = {item.item_id: item for item in loaded.items}
    practice, catch, main = assign_roles(records, options.practice, options.catch, options.seed)
    role: Role = "staircase" if options.staircase else "main"
    roles = [*((r, "practice") for r in practice), *((r, role) for r in main), *((r, "catch") for r in catch)]
    trials: list[Trial] = [make_trial(r, items[r.item_id], kind) for r, kind in roles]
    stairs = _staircase(records, trials, options) if options.staircase else None
    trials_bytes = _json_bytes({"trials": [t.model_dump(mode="json") for t in trials]})
    # A pilot's page shows every gold: its trials.json has them, its study id is the real study's (trials_bytes).
    page_trials = _json_bytes({"trials": [make_trial(r, items[r.item_id], kind, pilot=True).model_dump(mode="json")
                                          for r, kind in roles]}) if options.pilot else trials_bytes
    generic: dict[str, int] = {}
    for trial, (record, _) in zip(trials, roles):
        if not people_prompt(record.family, trial.answer_type, record.question)[1]:
            generic[record.family] = generic.get(record.family, 0) + 1
    assets = package.asset_files()
    _check_consent(out, assets[package.CONSENT], options.pilot)  # last: every other problem is said first
    jspsych, versions = package.vendored_jspsych()
    stimuli = {stimulus_name(r.item_id): loaded.image_path(r.item_id) for r in [*practice, *catch, *main]}

    out.mkdir(parents=True, exist_ok=True)
    package.copy_stimuli(out, stimuli)
    package.write_folder(out, package.LIB_DIR, jspsych)
    for folder in ("js", "css"):
        package.write_folder(out, folder, {k.split("/", 1)[1]: v for k, v in assets.items() if k.startswith(folder + "/")})
    package.write_file(out / package.PAGE, assets[package.PAGE])
    if not (out / package.CONSENT).is_file():
        package.write_file(out / package.CONSENT, assets[package.CONSENT])
    package.write_file(out / TRIALS, page_trials)
    files, size = package.folder_size(out)

    identity = _identity(loaded.folder)
    recorded = options.recorded()
    study_id = "s" + hashlib.sha256(_json_bytes([identity, recorded, __version__]) + trials_bytes).hexdigest()[:16]
    per_participant = len(participant_plan(trials, options.seed, "p", options.per_participant))
    counts = {"practice": len(practice), "main": 0 if stairs else len(main), "catch": len(catch),
              "per_participant": per_participant}
    if stairs is not None:
        counts["staircase"] = len(main)
        counts["per_participant"] = per_participant = per_participant + stairs["spec"]["trials"]
    manifest: dict[str, Any] = {
        "format": STUDY_FORMAT,
        "study_id": study_id,
        "stim3d_version": __version__,
        "batch": {"name": loaded.folder.resolve().name, "identity": identity, "items": len(loaded.items),
                  "questions": len(loaded.records)},
        "options": recorded,
        "counts": counts,
        "size": {"files": files, "bytes": size},
        "image_format": options.image_format,
        "stimuli_bytes": {rel: (out / rel).stat().st_size for rel in sorted(stimuli)},
        "jspsych": versions,
        "instructions": overview_pages([t.family for t in trials], [t.answer_type for t in trials],
                                       len(practice), len(catch), options.present_ms),
    }
    if stairs is not None:
        manifest["staircase"] = stairs
    if options.pilot:
        manifest["pilot"] = True
    package.write_file(out / MANIFEST, _json_bytes(manifest))
    # Where the batch is goes beside the study, not into study.json: study.json is served to every participant
    # and packed for JATOS, and an absolute path names the owner's machine, account and folders.
    package.write_file(out / PRIVATE, _json_bytes({"batch": str(loaded.folder.resolve())}))
    jzip = package.write_jzip(out, study_id, f"stim3d study {study_id}", options.completion_url) if options.jatos else None
    return BuildReport(study=out, study_id=study_id, counts=counts, per_participant=per_participant,
                       files=files, bytes=size, jzip=jzip, staircase=stairs, describe_left_out=len(describe),
                       generic_prompts=generic, pilot=options.pilot)

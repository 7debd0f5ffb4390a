"""The hand-off record: one JSON line per question, the contract between stim3d and any scoring core.

A record is self-contained: a scoring core needs nothing but the record (and, to
show the model, the image it points to). `difficulty` is flat so that any key can
be a breakdown axis. The model below is the contract, owned here by its consumer;
its JSON Schema is checked in at `scoring/schema/record.schema.json` (regenerate with
`stim3d schema --out scoring/schema/record.schema.json`; a test fails when the two drift).
This module imports nothing else of stim3d, so a scoring core can vendor `stim3d.scoring` alone.

Versioning: `schema_version` is "MAJOR.MINOR". A field added -> MINOR + 1; a
field removed, renamed or given another meaning -> MAJOR + 1. Readers refuse a
record of another MAJOR version (`RecordVersionError`).

1.1 (from 1.0): added `scene_id`, `sibling_question_ids`, `provenance.seed_entropy`,
`provenance.denoise`, `provenance.mask_agreement`; `difficulty` also holds every
family parameter; integer answers are scored with `count_soft` by default; cell rules
carry the grid size in `scoring.params` when the family reports `rows` and `cols`.

1.2 (from 1.1): added `provenance.generator_revision` and `provenance.library_versions`;
`provenance.samples` and `provenance.denoise` are null for engines that use neither
(workbench, raster) instead of repeating the config's Cycles settings.

1.3 (from 1.2): answer type `rubric` (the `describe` question): `answer.gold` is a rubric
(Must-Right and Easy-Wrong items, each with a structured fact and a weight, and a golden
caption; scoring/rubric.py), scored with the rule `gated` (docs/rubrics.md).

1.4 (from 1.3): ROSE's strict answer types `strict_count` (`COUNT(n)`), `strict_cell_set`
(`CLICK(Rr,Cc); ...; DONE`) and `strict_cell_set_count` (`...; SUBMIT(n)`), with the rules
`click_submit_soft` and `region_ok` (R-OK; its region is in `scoring.params` as
`region_row_min/max`, `region_col_min/max`, `region_exclude`); docs/rose.md.

1.5 (from 1.4): AVA-3D answer types (docs/ava.md) `box` (gold [x0, y0, x1, y1] in pixels;
`scoring.params` has the image `width` and `height` so a normalised answer can be scored),
`number` (metres) and `choice` (with the new field `answer.options`); rules `iou`,
`delta125` and `abs_rel` (normalised absolute error, also reported for integer answers).

1.6 (from 1.5): AVA-3D's `text` answer type (OCR: gold the exact string on a sign), rule
`anls` (Average Normalised Levenshtein Similarity); its PASS is equality, case ignored.
A record is written at the lowest version that holds it (`version_for`): only a `text`
record says 1.6, so records of the earlier answer types keep their bytes (a resumed batch
folder's records.jsonl is unchanged, tests/test_fixture_resume.py).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .answers import ANSWER_TYPES, AnswerType, Gold
from .answers import answer_text as answer_text  # re-exported: imported from here by exports and tests
from .rubric import Rubric

RECORD_SCHEMA_VERSION = "1.6"
ADDED_TYPES: dict[str, str] = {"text": "1.6"}  # answer types newer than 1.5, and the version that added them


def version_for(answer_type: object) -> str:
    """The lowest record version that can hold an answer of this type."""
    return ADDED_TYPES.get(str(answer_type), "1.5")
# Package data, found through importlib.resources like every file stim3d ships (a wheel install has no checkout).
SCHEMA_PATH = Path(str(resources.files(__package__ or "stim3d.scoring").joinpath("schema", "record.schema.json")))

# Views of the answer-type table (scoring/answers.py), by name: the protocol line and the default rule.
PROTOCOL: dict[str, str] = {name: kind.protocol for name, kind in ANSWER_TYPES.items()}
DEFAULT_RULE: dict[str, str] = {name: kind.default_rule for name, kind in ANSWER_TYPES.items()}
RuleName = Literal["exact", "count_soft", "cell_tolerance", "cell_distance", "set_f1", "gated", "click_submit_soft",
                   "region_ok", "iou", "delta125", "abs_rel", "anls"]
Scalar = Union[str, int, float, bool, None]


class NotFinite(ValueError):
    """NaN or an infinity in a line: Python's JSON reader takes them, strict readers do not."""


def _not_finite(constant: str) -> float:
    raise NotFinite(constant)


class RecordVersionError(ValueError):
    """A record written under another major schema version: this reader cannot trust its fields."""


class Strict(BaseModel):
    """Unknown keys and NaN or infinite numbers are refused: neither is in a record stim3d writes, and strict JSON
    readers (the exports' third parties) reject NaN."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ImageRef(Strict):
    path: str = Field(description="image.png, relative to the batch folder")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    width: int = Field(ge=1)
    height: int = Field(ge=1)


class Answer(Strict):
    """The answer type and the gold answer, checked against each other.

    integer: a non-negative int; letters: upper-case letters/digits in reading order;
    yes_no: "yes" or "no"; cell: [row, col], 1-based from the top-left ([0, 0] = none);
    cell_set: a list of distinct [row, col]; rubric: a Rubric (scoring/rubric.py);
    strict_count as integer, strict_cell_set and strict_cell_set_count as cell_set;
    box: [x0, y0, x1, y1] pixels with x0 < x1, y0 < y1; number: a positive number;
    choice: one of `options` (which only a choice answer has).
    """

    type: AnswerType
    gold: Gold
    options: list[str] | None = Field(None, description="choice answers: every option, in the order the question lists them")

    @field_validator("gold", mode="before")
    @classmethod
    def _not_a_boolean(cls, gold: Any) -> Any:
        if isinstance(gold, bool):  # pydantic would read true as 1
            raise ValueError(f"gold {gold!r} is not a valid answer (use 'yes'/'no' for yes_no)")
        return gold

    @model_validator(mode="after")
    def _gold_fits_type(self) -> Answer:
        gold, kind = self.gold, self.type
        checks = {
            "integer": isinstance(gold, int) and not isinstance(gold, bool) and gold >= 0,
            "letters": isinstance(gold, str) and gold.isalnum() and gold == gold.upper(),
            "yes_no": gold in ("yes", "no"),
            "cell": isinstance(gold, tuple) and all(v >= 0 for v in gold),
            "cell_set": isinstance(gold, list) and len(set(map(tuple, gold))) == len(gold)
            and all(v >= 1 for cell in gold for v in cell),
            "rubric": isinstance(gold, Rubric),
        }
        checks["strict_count"] = checks["integer"]
        checks["strict_cell_set"] = checks["strict_cell_set_count"] = checks["cell_set"]
        checks["box"] = isinstance(gold, tuple) and len(gold) == 4 and 0 <= gold[0] < gold[2] and 0 <= gold[1] < gold[3]
        checks["number"] = isinstance(gold, (int, float)) and not isinstance(gold, bool) and gold > 0
        checks["text"] = isinstance(gold, str) and bool(gold.strip())
        checks["choice"] = isinstance(gold, str) and self.options is not None and bool(self.options) and gold in self.options
        if (self.options is not None) != (kind == "choice"):
            raise ValueError(f"a {kind} answer {'needs' if kind == 'choice' else 'has no'} options")
        if not checks[kind]:
            raise ValueError(f"gold {gold!r} is not a valid {kind} answer")
        return self


class Scoring(Strict):
    """The rule a scoring core applies for partial credit, and its parameters (e.g. rows, cols, tolerance)."""

    rule: RuleName
    params: dict[str, Union[int, float]] = Field(default_factory=dict)


class RecordProvenance(Strict):
    """Which code and settings made the record's image (the git commit of a run is in summary.json)."""

    stim3d_version: str
    generator_revision: int | None = Field(
        None, description="the family's generator revision: bumped whenever the family's output changes"
    )
    blender_version: str | None
    library_versions: dict[str, Union[str, None]] = Field(
        default_factory=dict, description="installed versions of bpy, numpy, trimesh and embreex"
    )
    engine: str
    samples: int | None = Field(description="Cycles samples; null for engines that take none (workbench, raster)")
    denoise: bool | None = Field(description="Cycles denoising; null for engines without a denoiser")
    seed: int = Field(description="the item's seed (Cycles seed)")
    seed_entropy: list[int] = Field(description="[batch_seed, task_index, item_index]: regenerates the item")
    mask_agreement: float | None = Field(description="share of pixels where the renderer's mask equals the ray cast")


class Record(Strict):
    """One question about one image, with everything needed to score an answer to it."""

    schema_version: str = Field(
        RECORD_SCHEMA_VERSION, pattern=rf"^{RECORD_SCHEMA_VERSION.split('.')[0]}\.[0-9]+$",
        description="MAJOR.MINOR; readers accept their own MAJOR only (required in the JSON Schema)",
    )
    item_id: str = Field(description="the image (item folder) this question is about")
    question_id: str = Field(description="unique within a batch; predictions name it")
    scene_id: str = Field(
        description="records with the same scene_id show the same composed scene: the questions of one item, "
        "and items derived from it (a sweep level names its source item in difficulty.source_item_id)"
    )
    sibling_question_ids: list[str] = Field(description="the other questions about the same image, in item order")
    family: str
    split: str
    image: ImageRef
    prompt: str = Field(description="what the model is shown with the image: the question, then the answer protocol")
    question: str
    answer: Answer
    scoring: Scoring
    subject: dict[str, Union[str, int, float]] = Field(default_factory=dict, description="what the question asks about")

    def choice_synonyms(self) -> dict[str, tuple[str, ...]]:
        """A choice's other words for its options, from `subject["synonyms"]` ("mug=mug|cup;car=car|auto", AVA object
        recognition): an open answer naming "a coffee cup" is the option mug. Entries naming no option are ignored."""
        listed = self.subject.get("synonyms")
        if self.answer.options is None or not isinstance(listed, str):
            return {}
        pairs = (entry.split("=", 1) for entry in listed.split(";") if "=" in entry)
        return {option: tuple(w for w in words.split("|") if w) for option, words in pairs if option in self.answer.options}

    @model_validator(mode="before")
    @classmethod
    def _lowest_version(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "schema_version" in data:
            return data
        answer = data.get("answer")
        kind = answer.get("type") if isinstance(answer, dict) else getattr(answer, "type", None)
        return {**data, "schema_version": version_for(kind)}
    difficulty: dict[str, Scalar] = Field(
        description="flat: the family's control parameters (sequences as name.0, name.1, ...) and measured values "
        "such as least_visibility"
    )
    provenance: RecordProvenance


def parse_record(data: Any) -> Record:
    """Validate one record, refusing another major schema version before looking at its fields.

    Parameters
    ----------
    data : Any
        One decoded JSON line of a records.jsonl.

    Returns
    -------
    Record
        The validated record.

    Raises
    ------
    RecordVersionError
        `schema_version` is missing or of another major version than `RECORD_SCHEMA_VERSION`.
    pydantic.ValidationError
        A field is missing, unknown or of the wrong type, or the gold does not fit the answer type.
    """
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(version, str) or version.split(".")[0] != RECORD_SCHEMA_VERSION.split(".")[0]:
        raise RecordVersionError(
            f"record schema_version {version!r} is not readable by this stim3d (reads {RECORD_SCHEMA_VERSION.split('.')[0]}.x)"
        )
    return Record.model_validate(data)


def read_records(path: Path) -> list[Record]:
    """Every record of a records.jsonl, in file order (blank lines are skipped).

    Parameters
    ----------
    path : Path
        The records.jsonl file.

    Returns
    -------
    list of Record

    Raises
    ------
    ValueError
        One line naming the file, the line number and what is wrong with the first bad record
        (not JSON, a field, or another major schema version).
    """
    records = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(parse_record(json.loads(line, parse_constant=_not_finite)))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} line {number}: not JSON ({exc.msg})") from None
        except NotFinite as exc:
            raise ValueError(f"{path} line {number}: {exc} is not a number JSON allows (every number must be "
                             "finite)") from None
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(map(str, error["loc"])) or "record"
            raise ValueError(f"{path} line {number}: {where}: {error['msg']}") from None
        except RecordVersionError as exc:
            raise ValueError(f"{path} line {number}: {exc}") from None
    return records


def record_json_schema() -> dict[str, Any]:
    """The JSON Schema of a record (draft 2020-12), as checked in at SCHEMA_PATH."""
    schema = Record.model_json_schema()
    # A record without schema_version cannot be read (parse_record refuses it): the schema says so too.
    schema["required"] = ["schema_version", *schema["required"]]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "description": f"stim3d hand-off record, schema_version {RECORD_SCHEMA_VERSION}. {schema.pop('description', '')}".strip(),
        **schema,
    }


def record_schema_text() -> str:
    """The exact bytes of the checked-in schema file."""
    return json.dumps(record_json_schema(), indent=2, sort_keys=True) + "\n"

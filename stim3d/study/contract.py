"""What the study page and the Python side agree on: the trial spec, the session file, each participant's plan.

Written once here and mirrored by the page's `js/plan.js` (the plan) and the widgets
(the response texts); tests hold the two sides to each other (the plan through node,
the widgets in a real browser). docs/study.md describes the same contract for users.

- A **trial** is one question of the batch shown to a person: `trials.json` lists every
  trial the study may show, with the image, the question text, the answer type and what
  the widget needs (options, the grid's cells in image pixels). Golds appear only on
  practice and staircase trials (the page judges those) and on every trial of a pilot
  build (shown to the study's owner); a real study's main and catch trials are scored
  from the batch's own records, so a participant reading the page's files learns nothing.
- A **response** is text in exactly the grammar the scoring core parses for its answer
  type (`RESPONSE_FORMS`), so `stim3d study score` passes it through the same parser and
  rule as a model's answer.
- A **session** is one participant's visit: `STUDY/data/<participant>/<session>.json`,
  written by the server after every trial (or offered as a download without one). A
  trial is stored once per (session, index): a reloaded page resumes after the last
  stored trial and never duplicates one.
- A **plan** is the ordered list of trial ids one participant sees, derived from the
  study's seed and the participant id alone (`participant_plan`), so any session can be
  reconstructed and checked.
- A **staircase step** (a sweep study built with `--staircase`, docs/study_staircase.md)
  depends on the answers before it, so it cannot be in the fixed plan: staircase trials
  have role `staircase` (never in a plan, golds included: the page judges them), and the
  k-th step (from 0) is stored as a `TrialResult` at index `len(plan) + k` with the
  `level` it was asked at; `stim3d/study/staircase.py session_steps` is its check.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from stim3d.eval.people import PEOPLE
from stim3d.eval.store import model_slug
from stim3d.scenes.names import NAME_LIMIT, check_name

STUDY_FORMAT = "stim3d-study/1"
SESSION_FORMAT = "stim3d-study-session/1"
MANIFEST = "study.json"
TRIALS = "trials.json"
DATA_DIR = "data"
PRIVATE = ".stim3d-private.json"  # the owner's side of the study: the batch's path (hidden: never served or packed)
MAX_BODY_BYTES = 1 << 20  # one session file, every trial included, is far below this
MAX_RESPONSE_CHARS = 4000  # a rubric description fits; a pasted novel does not
MAX_RT_MS = 3_600_000

Role = Literal["main", "practice", "catch", "staircase"]
PARTICIPANT_LIMIT = NAME_LIMIT - len(PEOPLE) - 1  # eval/human-<participant> is one name of at most NAME_LIMIT


def check_participant(value: str) -> str:
    """`value` if it is a canonical participant id; else ValueError in one line.

    Canonical: a safe name (check_name) that is its own results folder's name, eval/human-<id>
    (eval/store.py model_slug drops trailing '.', '_' and '-' and cuts at NAME_LIMIT). Why:
    `p1`, `p1-` and `p1.` would otherwise be three participants scored into one folder, each
    run overwriting the last; refusing is plainer than a mapping a study owner must look up.
    """
    check_name(value, "participant id")
    if model_slug(f"{PEOPLE}:{value}") != f"{PEOPLE}-{value}":
        raise ValueError(f"participant id {value!r}: must end in a letter or digit and have at most "
                         f"{PARTICIPANT_LIMIT} characters (it names the results folder {PEOPLE}-<id>)")
    return value


ParticipantId = Annotated[str, AfterValidator(check_participant)]
SessionId = Annotated[str, AfterValidator(lambda v: check_name(v, "session id"))]
TrialId = Annotated[str, AfterValidator(lambda v: check_name(v, "trial id"))]

# The text a widget submits for each answer type: exactly what scoring/answers.py parses. The page has a
# widget for these types and only these (js/answer_widgets.js, writing js/responses.js's texts); `study build`
# refuses an item of any other type.
RESPONSE_FORMS: dict[str, str] = {
    "integer": "3",
    "yes_no": "yes | no",
    "letters": "QP (upper case, reading order)",
    "cell": "Row 2, Column 5",
    "cell_set": "Row 1, Column 2; Row 3, Column 4 | none",
    "strict_count": "COUNT(3)",
    "strict_cell_set": "CLICK(R1,C2); CLICK(R3,C4); DONE",
    "strict_cell_set_count": "CLICK(R1,C2); CLICK(R3,C4); SUBMIT(2)",
    "box": "[x0, y0, x1, y1] in the image's own pixels, x1 and y1 exclusive",
    "number": "2.35 (metres)",
    "choice": "one option, verbatim",
    "text": "the text as written on the sign, or an object's name (white space collapsed, double quotes and end "
            "punctuation dropped, as the scoring core reads it)",
    "rubric": "free text",
}


class Cell(BaseModel):
    """One grid cell as the page draws and hit-tests it: 1-based row and column, a box in image pixels."""

    model_config = ConfigDict(extra="forbid")
    row: int = Field(ge=1)
    col: int = Field(ge=1)
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in the image's own pixels (x1, y1 exclusive)


class Grid(BaseModel):
    """The item's projected grid: what cell and click widgets map a click through."""

    model_config = ConfigDict(extra="forbid")
    rows: int = Field(ge=1)
    cols: int = Field(ge=1)
    cells: list[Cell]


class Trial(BaseModel):
    """One question as the page shows it (an entry of trials.json)."""

    model_config = ConfigDict(extra="forbid")
    trial_id: TrialId  # the question id
    item_id: str
    question_id: str
    family: str
    role: Role
    answer_type: str
    prompt: str  # the question as a participant reads it (no model protocol line)
    instructions: str  # how to answer, for a naive participant (the widget's label)
    options: list[str] | None = None
    image: str  # relative to the study folder: stimuli/<file>
    width: int = Field(ge=1)
    height: int = Field(ge=1)
    grid: Grid | None = None  # cell, cell_set and strict click types
    gold: Any = None  # practice and staircase trials (the page judges those), every trial of a pilot build; else None
    gold_text: str | None = None  # the gold as a response would write it (practice feedback, staircase steps)
    difficulty: dict[str, Any] = Field(default_factory=dict)


class Environment(BaseModel):
    """What the page records about the participant's display (nothing identifying)."""

    model_config = ConfigDict(extra="forbid")
    screen: tuple[int, int] | None = None
    window: tuple[int, int] | None = None
    device_pixel_ratio: float | None = Field(default=None, ge=0, le=16)


class TrialResult(BaseModel):
    """One answered trial: its position in the plan, the response text, its time, focus losses while it showed."""

    model_config = ConfigDict(extra="forbid")
    index: int = Field(ge=0)
    trial_id: TrialId
    role: Role
    response: str = Field(max_length=MAX_RESPONSE_CHARS)
    rt_ms: int = Field(ge=0, le=MAX_RT_MS)
    focus_losses: int = Field(default=0, ge=0)
    presented_ms: int | None = Field(default=None, ge=0)
    level: float | None = None  # staircase steps only: the sweep level the staircase asked (checked on replay)

    @model_serializer(mode="wrap")
    def _without_level(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A trial that is no staircase step is written as before `level` existed (session files stay the same)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("level") is None:
            data.pop("level", None)
        return data


class Session(BaseModel):
    """One participant's visit, as the server stores it and the download fallback saves it."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["stim3d-study-session/1"] = "stim3d-study-session/1"  # SESSION_FORMAT
    study: str  # the study id of study.json
    participant: ParticipantId
    session: SessionId
    prolific: dict[str, str] | None = None  # STUDY_ID and SESSION_ID when Prolific sent them
    environment: Environment = Field(default_factory=Environment)
    plan: list[TrialId]
    trials: list[TrialResult] = Field(default_factory=list)
    complete: bool = False


def fnv1a32(text: str) -> int:
    """FNV-1a, 32 bits, over the UTF-8 bytes: the one hash the plan uses (js/plan.js computes the same)."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def participant_plan(trials: list[Trial], seed: int, participant: str, per_participant: int | None) -> list[str]:
    """The trial ids one participant sees, in order: practice first, then main trials with catch trials spread in.

    Main trials: the `per_participant` with the smallest hash of (seed, participant, trial)
    (all of them when None), shown in the order of a second hash; so each participant sees
    a different, reproducible subset and order, and over many participants every trial is
    seen about equally often. Practice trials keep the study's order. Catch trials go at
    evenly spaced positions among the main ones, the k-th (from 0) at (k + 1) * n / (c + 1)
    rounded half up, in integers so that the page's JavaScript gets the same positions.
    """
    def rank(purpose: str, trial_id: str) -> tuple[int, str]:
        return fnv1a32(f"{seed}|{participant}|{purpose}|{trial_id}"), trial_id

    main = [t.trial_id for t in trials if t.role == "main"]
    chosen = sorted(main, key=lambda t: rank("select", t))
    if per_participant is not None:
        chosen = chosen[:per_participant]
    ordered = sorted(chosen, key=lambda t: rank("order", t))
    catches = [t.trial_id for t in trials if t.role == "catch"]
    for k in reversed(range(len(catches))):
        slots = len(catches) + 1
        ordered.insert((2 * (k + 1) * len(chosen) + slots) // (2 * slots), catches[k])
    return [t.trial_id for t in trials if t.role == "practice"] + ordered

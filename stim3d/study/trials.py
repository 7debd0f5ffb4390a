"""A batch's record and item -> one contract `Trial`: the prompt a person reads, the widget's needs, the grid in pixels.

The grid of the cell and click answer types comes from the item's ground truth: each
grid object (integer `row` and `col` attributes, no `role` such as a cue or the board)
has a measured centroid in the image (`ground_truth.objects[].centroid_px`; the
projection of its location when it has no visible pixel). A cell's box reaches halfway
to the centroids of its neighbours in the same row (left and right edges) and the same
column (top and bottom), and beyond an outer cell as far again or to the edge of the
object's visible box, whichever is further, clipped to the image: so every object's
centroid lies inside its own cell, a click anywhere on an outer object still lands in
its cell, and a click is mapped to the cell whose object the participant pointed at,
under the camera's perspective.

The prompt is the people's prompt of prompts.py (the model's question stays in the
records). Golds are written only on practice and staircase trials (the page judges a
staircase answer before it picks the next level), and on every trial of a pilot build
(the page shows the owner each gold after the answer); a main trial's `difficulty` keeps
only keys that cannot give an answer away (`SAFE_DIFFICULTY_KEYS`: visibility levels,
the look, a sweep's level), because some families record the answer there (`answer`,
`n_exceptions`, `odd_present`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stim3d.scenes.camera import geometry
from stim3d.scenes.model import Item
from stim3d.scoring.answers import answer_text
from stim3d.scoring.records import Record
from stim3d.study.contract import RESPONSE_FORMS, Cell, Grid, Role, Trial
from stim3d.study.errors import StudyError
from stim3d.study.instructions import OPEN_NAME_INSTRUCTIONS, answer_instructions
from stim3d.study.prompts import mention_topics, people_prompt

GRID_TYPES = frozenset({"cell", "cell_set", "strict_cell_set", "strict_cell_set_count"})
SAFE_DIFFICULTY_KEYS = frozenset({
    "least_visibility", "min_visibility", "target_visibility", "look",
    "sweep_id", "sweep_level", "sweep_offset_m", "source_item_id", "source_min_visibility",
})
STIMULI_DIR = "stimuli"


def stimulus_name(item_id: str) -> str:
    """The study-relative path of an item's image (one file per item, shared by its questions)."""
    return f"{STIMULI_DIR}/{item_id}.png"


def grid_objects(item: Item) -> dict[tuple[int, int], int]:
    """(row, col) -> object id of the item's grid objects (cues, boards and labels carry a `role` and are left out)."""
    cells: dict[tuple[int, int], int] = {}
    for obj in item.scene.objects:
        row, col = obj.attributes.get("row"), obj.attributes.get("col")
        if "role" in obj.attributes or isinstance(row, bool) or not isinstance(row, int) or not isinstance(col, int):
            continue
        cells[(row, col)] = obj.id
    return cells


def object_centroids(item: Item, ids: list[int]) -> dict[int, tuple[float, float]]:
    """Each object's centroid in image pixels: measured where it has visible pixels, projected otherwise."""
    truths = {t.id: t for t in item.ground_truth.objects}
    where: dict[int, tuple[float, float]] = {}
    missing = []
    for oid in ids:
        truth = truths.get(oid)
        if truth is not None and truth.centroid_px is not None:
            where[oid] = (float(truth.centroid_px[0]), float(truth.centroid_px[1]))
        else:
            missing.append(oid)
    if missing:
        by_id = {o.id: o for o in item.scene.objects}
        u, v, _ = geometry(item.scene.camera).project(np.array([by_id[oid].location for oid in missing], dtype=float))
        where.update({oid: (float(u[i]), float(v[i])) for i, oid in enumerate(missing)})
    return where


def _edges(values: list[float], index: int, limit: float) -> tuple[float, float]:
    """The low and high edge of position `index` among `values` (in order): halfway to each neighbour."""
    here = values[index]
    low = (values[index - 1] + here) / 2 if index > 0 else None
    high = (values[index + 1] + here) / 2 if index + 1 < len(values) else None
    if low is None and high is not None:
        low = here - (high - here)
    if high is None and low is not None:
        high = here + (here - low)
    if low is None or high is None:  # a single row or column: the whole image
        return 0.0, limit
    return max(0.0, low), min(limit, high)


def _outer(box: tuple[float, float, float, float], bbox: Any, r: int, c: int, rows: int, cols: int,
           size: tuple[int, int]) -> tuple[float, float, float, float]:
    """An outer cell's box grown to the object's visible box on its outer sides."""
    x0, y0, x1, y1 = box
    if bbox is None:
        return box
    if c == 1:
        x0 = max(0.0, min(x0, float(bbox[0])))
    if c == cols:
        x1 = min(float(size[0]), max(x1, float(bbox[2])))
    if r == 1:
        y0 = max(0.0, min(y0, float(bbox[1])))
    if r == rows:
        y1 = min(float(size[1]), max(y1, float(bbox[3])))
    return x0, y0, x1, y1


def item_grid(item: Item, width: int, height: int) -> Grid:
    """The item's grid, its cells in image pixels (see the module's docstring)."""
    cells_by_pos = grid_objects(item)
    if not cells_by_pos:
        raise StudyError(f"item {item.item_id}: a grid answer but no object with row and col attributes")
    rows = max(r for r, _ in cells_by_pos)
    cols = max(c for _, c in cells_by_pos)
    absent = [(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1) if (r, c) not in cells_by_pos]
    if absent:
        raise StudyError(f"item {item.item_id}: grid cell row {absent[0][0]}, column {absent[0][1]} has no object")
    centroid = object_centroids(item, list(cells_by_pos.values()))
    at = {pos: centroid[oid] for pos, oid in cells_by_pos.items()}
    bboxes = {t.id: t.bbox_visible for t in item.ground_truth.objects}
    cells = []
    for r in range(1, rows + 1):
        xs = [at[(r, c)][0] for c in range(1, cols + 1)]
        for c in range(1, cols + 1):
            ys = [at[(rr, c)][1] for rr in range(1, rows + 1)]
            x0, x1 = _edges(xs, c - 1, float(width))
            y0, y1 = _edges(ys, r - 1, float(height))
            x0, y0, x1, y1 = _outer((x0, y0, x1, y1), bboxes.get(cells_by_pos[(r, c)]), r, c, rows, cols,
                                    (width, height))
            cells.append(Cell(row=r, col=c, box=(round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))))
    return Grid(rows=rows, cols=cols, cells=cells)


def record_gold(record: Record) -> Any:
    """The record's gold as JSON (tuples as lists, a rubric as its object)."""
    return record.answer.model_dump(mode="json")["gold"]


def make_trial(record: Record, item: Item, role: Role, pilot: bool = False) -> Trial:
    """One trial of `role` for a record; golds and the full difficulty only on practice and staircase trials.

    Those are the trials the page itself judges (practice feedback, the staircase's next level). Main and catch
    trials carry neither: trials.json is served to every participant, and a catch trial whose answer is in it
    checks nothing; the scorer checks catch answers against the batch's records (exclusions.py). A `pilot` build
    (the owner trying the study) carries every trial's gold, shown after each answer; never a real study.
    """
    # A choice asked openly (AVA object recognition's q1) is typed, not picked: no buttons to name the answer.
    # It is scored from its record all the same (the options' synonyms, scoring/records.py).
    is_open = record.answer.type == "choice" and record.subject.get("form") == "open"
    answer_type = "text" if is_open else record.answer.type
    if answer_type not in RESPONSE_FORMS:  # the page would stop on it: refuse before a participant meets it
        raise StudyError(f"item {record.item_id}, question {record.question_id}: answer type {answer_type!r} has no "
                         "widget on the study page; leave the item out (`filter`) or add the widget")
    options = None if is_open or record.answer.options is None else list(record.answer.options)
    judged = role in ("practice", "staircase")  # the page judges these: the full difficulty too
    with_gold = judged or pilot
    gold = record_gold(record) if with_gold else None
    difficulty = (dict(record.difficulty) if judged
                  else {k: v for k, v in record.difficulty.items() if k in SAFE_DIFFICULTY_KEYS})
    mention = mention_topics(record_gold(record)) if answer_type == "rubric" else None
    return Trial(
        trial_id=record.question_id,
        item_id=record.item_id,
        question_id=record.question_id,
        family=record.family,
        role=role,
        answer_type=answer_type,
        prompt=people_prompt(record.family, answer_type, record.question)[0],
        instructions=OPEN_NAME_INSTRUCTIONS if is_open else answer_instructions(answer_type, mention),
        options=options,
        image=stimulus_name(record.item_id),
        width=record.image.width,
        height=record.image.height,
        grid=item_grid(item, record.image.width, record.image.height) if answer_type in GRID_TYPES else None,
        gold=gold,
        gold_text=answer_text(answer_type, record.answer.gold) if with_gold else None,
        difficulty=difficulty,
    )

"""ROSE's prompts: the protocol every question starts with, the five tasks' wording and answer types.

Split out of rose_grid.py (which composes the scene and decides the golds) so the family
module stays small; the wording is ROSE's strict grammar, unchanged.
"""

from __future__ import annotations

from typing import Any, Protocol

from ...model import Question
from .rose_regions import Region

PROTOCOL = (
    "You are given a grid image: {rows} rows and {cols} columns of 3D objects standing on the ground. Rows are "
    "counted from top to bottom, and columns from left to right, both starting from 1. Output only the formal "
    "answer in the required format. Do not output any explanation. Allowed answer formats: 1) COUNT(n) "
    "2) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE 3) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; SUBMIT(n). Examples: COUNT(3) | "
    "CLICK(R2,C5); CLICK(R4,C7); DONE | CLICK(R2,C5); CLICK(R4,C7); SUBMIT(2)."
)
TASKS = {
    "T1": "Count the number of cells that are different from the majority in the whole grid.",
    "T2": "Count the number of cells that are different from the majority {inside}.",
    "T3": "Click all cells that are different from the majority {inside}.",
    "T4": "Click all cells that are different from the majority inside the highlighted region (the cells standing "
          "on yellow tiles).",
    "T5": "Click all cells that are different from the majority in all cells except {phrase}, then submit the total "
          "number of clicked cells.",
}
ANSWER_TYPE = {"T1": "strict_count", "T2": "strict_count", "T3": "strict_cell_set", "T4": "strict_cell_set",
               "T5": "strict_cell_set_count"}


class GridParams(Protocol):
    """What a question needs of the family's parameters."""

    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def exception(self) -> str: ...


def question(task: str, case: str, region: Region | None, gold: Any, params: GridParams) -> Question:
    rows, cols = params.rows, params.cols
    bounds = region or Region("grid", 1, rows, 1, cols)
    text = TASKS[task].format(inside=bounds.inside(), phrase=bounds.phrase())
    return Question(
        question_id=task.lower(), text=f"{PROTOCOL.format(rows=rows, cols=cols)} {text}",
        answer_type=ANSWER_TYPE[task], gold=gold,
        subject={"task": task, "case": case, "region": bounds.kind, "exception": params.exception,
                 "targets": gold if isinstance(gold, int) else len(gold),
                 "region_row_min": bounds.row_min, "region_row_max": bounds.row_max,
                 "region_col_min": bounds.col_min, "region_col_max": bounds.col_max,
                 "region_exclude": int(task == "T5")},
    )

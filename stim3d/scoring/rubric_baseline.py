"""The best constant description: how far one fixed text gets on a batch's rubric records.

A describe question has no constant answer in the usual sense (its gold is a whole
rubric), so render/batch/summary.py leaves rubric records out of its constant
baselines. The analogue is a description written once and given for every image of
a family. The candidates are golden captions of the family's own images: a caption
is the most plausible text a prior-only model could produce (right words, right
sentence shapes, real counts), so its mean gated score over the *other* images of
the family (leave one out: on its own image a caption scores 1) estimates what
answering without looking gets. A low figure says the rubrics
need the image; a high one names a family whose rubric a fixed text passes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .judges import reference_judge
from .rubric import Judge, Rubric, judge_rubric

MAX_CANDIDATES = 12  # golden captions tried per family, spread evenly over its images (cost: candidates x images)


@dataclass(frozen=True)
class DescriptionBaseline:
    """One family's best constant description and its mean gated score (undecided counts 0, as in `score`)."""

    family: str
    questions: int
    candidates: int
    best_score: float  # mean gated score of the best candidate over the family's other rubrics
    full_marks: float  # share of those rubrics that candidate scores 1 on
    best_caption: str


def spread(n: int, k: int) -> list[int]:
    """k indices spread evenly over range(n) (all of them when n <= k), first and last included."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def family_baseline(family: str, rubrics: Sequence[Rubric], judge: Judge = reference_judge,
                    max_candidates: int = MAX_CANDIDATES) -> DescriptionBaseline:
    """The best of up to `max_candidates` golden captions of `rubrics`, each given as the answer to all the others."""
    if len(rubrics) < 2:
        raise ValueError(f"family {family}: a constant description needs at least 2 rubrics (one to take the "
                         f"caption from, one to score it on); got {len(rubrics)}")
    best: tuple[float, float, str] | None = None
    candidates = spread(len(rubrics), max_candidates)
    for index in candidates:
        caption = rubrics[index].caption
        scores = [judge_rubric(rubric, caption, judge).score or 0.0 for i, rubric in enumerate(rubrics) if i != index]
        mean, full = sum(scores) / len(scores), sum(s == 1.0 for s in scores) / len(scores)
        if best is None or (mean, full) > best[:2]:
            best = (mean, full, caption)
    assert best is not None  # rubrics is not empty
    return DescriptionBaseline(family, len(rubrics), len(candidates), round(best[0], 4), round(best[1], 4), best[2])


def description_baselines(pairs: Iterable[tuple[str, Rubric]], judge: Judge = reference_judge,
                          max_candidates: int = MAX_CANDIDATES) -> list[DescriptionBaseline]:
    """Per family (sorted by name), the best constant description over that family's (family, rubric) pairs.

    Families with a single rubric are left out (there is nothing to score a constant on).
    """
    by_family: dict[str, list[Rubric]] = defaultdict(list)
    for family, rubric in pairs:
        by_family[family].append(rubric)
    return [family_baseline(family, rubrics, judge, max_candidates) for family, rubrics in sorted(by_family.items())
            if len(rubrics) > 1]

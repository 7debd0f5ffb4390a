"""Scoring rules: (parsed answer, gold, params) -> a score in [0, 1].

Every rule takes canonical values (see parsers.py) and gives 0 for an invalid
(None) answer. Sources:

- `exact` (PASS): equality; letters case-insensitive; a cell set must equal the gold
  set with no repeated and no out-of-grid cell (ROSE's strict click PASS).
- `count_soft`: ROSE's SOFT for counts, 1 / (1 + |n_pred - n_gold|).
- `cell_tolerance`: OddGridBench's TolAcc: right when |d_row| <= t and |d_col| <= t
  (t = params.tolerance, default 1).
- `cell_distance`: OddGridBench's distance-aware reward: 1 for the exact cell, else
  max(exp(-d^2 / (2 sigma^2)) - beta, 0) with d the Euclidean distance in cells,
  sigma = lambda * sqrt(rows^2 + cols^2), lambda = 0.25, beta = 0.3 (params
  `sigma_scale`, `beta`); needs `rows` and `cols` in params.
- `set_f1`: ROSE's strict coordinate-set F1: 2|P & G| / (|P| + |G|), 1 when both are
  empty, 0 when exactly one is, and 0 when the answer repeats a cell or names a cell
  outside the grid (when params give `rows` and `cols`); it is ROSE's C-F1 when
  averaged over the click records (click-and-submit ones included: their clicks).
- `click_submit_soft`: ROSE's SOFT for click-and-submit: the mean of the strict set
  F1, count SOFT of the submitted count, and consistency (the submitted count equals
  the number of unique in-grid clicks). Its PASS (`exact`) needs the exact set, no
  repeated or out-of-grid click, and a submitted count equal to the truth and to the
  number of unique clicks.
- `region_ok`: ROSE's R-OK per record: 1 - |P - R| / |P|, P the unique in-grid clicks,
  R the permitted cells (params `region_row_min/max`, `region_col_min/max`: a block,
  1-based; `region_exclude` = 1: every cell outside it); 1 when P is empty. Like every
  rule here it gives 0 to an answer that does not parse (ROSE leaves that case open).
- `gated` (rubric answers, PerceptionRubrics): 0 if any Must-Right item fails, else the
  weighted fraction of Easy-Wrong items satisfied (scoring/rubric.py, docs/rubrics.md).

AVA-3D (docs/ava.md):
- `iou` (box answers): intersection over union of the answered and the gold box
  (xyxy, continuous); an answer with every coordinate <= 1 is read as normalised
  and scaled by params `width` and `height`. PASS (`exact`) for a box is IoU >= 0.5,
  AVA-Bench's localisation accuracy.
- `giou` (box answers): generalised IoU, IoU - |C - (A u B)| / |C| with C the smallest box
  enclosing both (AVA-Bench's localisation metric), in [-1, 1]; an unparsed answer gets -1.
- `delta125` (number answers): 1 when max(pred / gold, gold / pred) < 1.25, the depth
  estimation threshold accuracy; it is also a number's PASS (`exact`).
- `abs_rel` (number and integer answers): the normalised absolute error
  |pred - gold| / gold (|pred - gold| when gold is 0), AVA-Bench's MAE/GT for depth and
  counting. Unlike every other rule it is an error (lower is better), and an answer that
  does not parse counts as error 1 (100 %), not 0.
- `anls` (text answers): Average Normalised Levenshtein Similarity per answer, as AVA-Bench
  scores OCR: NL = edit distance / the longer string's length (case ignored), the score is
  1 - NL when NL < 0.5 and 0 otherwise. A text's PASS (`exact`) is equality, case ignored.

For the cell rules, (0, 0) means "no cell" (OddGridBench's `Row 0, Column 0`): it
earns credit only from an exact match, never from being near a real cell.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .parsers_actions import Submission

Params = Mapping[str, float]
NO_CELL = (0, 0)


class RuleError(ValueError):
    """A rule that does not fit a record (wrong answer type, a missing parameter)."""


@dataclass(frozen=True)
class Rule:
    name: str
    answer_types: tuple[str, ...]
    required_params: tuple[str, ...]
    score: Callable[[Any, Any, Params], float]
    invalid: float = 0.0  # the value an answer that does not parse gets (an error rule's worst case)


def _in_grid(cell: tuple[int, int], params: Params) -> bool:
    rows, cols = params.get("rows"), params.get("cols")
    if rows is None or cols is None:
        return True
    return 1 <= cell[0] <= rows and 1 <= cell[1] <= cols


def _clean_clicks(cells: tuple, params: Params) -> bool:
    """ROSE's c_i: no repeated cell and no cell outside the grid."""
    return len(set(cells)) == len(cells) and all(_in_grid(cell, params) for cell in cells)


def _is_box(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 4 and not isinstance(value[0], tuple)


def iou(pred: tuple, gold: tuple, params: Params) -> float:
    if max(pred) <= 1.0 and "width" in params and "height" in params:
        w, h = params["width"], params["height"]
        pred = (pred[0] * w, pred[1] * h, pred[2] * w, pred[3] * h)
    ix = max(0.0, min(pred[2], gold[2]) - max(pred[0], gold[0]))
    iy = max(0.0, min(pred[3], gold[3]) - max(pred[1], gold[1]))
    inter = ix * iy
    union = (pred[2] - pred[0]) * (pred[3] - pred[1]) + (gold[2] - gold[0]) * (gold[3] - gold[1]) - inter
    return inter / union if union > 0 else 0.0


def giou(pred: tuple, gold: tuple, params: Params) -> float:
    if max(pred) <= 1.0 and "width" in params and "height" in params:
        w, h = params["width"], params["height"]
        pred = (pred[0] * w, pred[1] * h, pred[2] * w, pred[3] * h)
    area = (pred[2] - pred[0]) * (pred[3] - pred[1]) + (gold[2] - gold[0]) * (gold[3] - gold[1])
    overlap = iou(pred, gold, {})
    union = area / (1.0 + overlap)  # |A u B|, from |A| + |B| = |A u B| + |A n B| and IoU = |A n B| / |A u B|
    hull = (max(pred[2], gold[2]) - min(pred[0], gold[0])) * (max(pred[3], gold[3]) - min(pred[1], gold[1]))
    return overlap - (hull - union) / hull if hull > 0 else overlap


def delta125(pred: float, gold: float, params: Params) -> float:
    if pred <= 0:
        return 0.0
    return float(max(pred / gold, gold / pred) < 1.25)


def abs_rel(pred: float, gold: float, params: Params) -> float:
    return abs(pred - gold) / gold if gold else float(abs(pred - gold))


def exact(pred: Any, gold: Any, params: Params) -> float:
    if isinstance(gold, Submission):
        unique = set(pred.cells)
        return float(_clean_clicks(pred.cells, params) and unique == set(gold.cells)
                     and pred.count == gold.count == len(unique))
    if isinstance(gold, tuple) and (not gold or isinstance(gold[0], tuple)):  # a cell set
        return float(_clean_clicks(pred, params) and set(pred) == set(gold))
    if _is_box(gold):
        return float(iou(pred, gold, params) >= 0.5)
    if isinstance(gold, float):
        return delta125(pred, gold, params)
    if isinstance(gold, str):
        return float(isinstance(pred, str) and pred.upper() == gold.upper())
    return float(pred == gold)


def levenshtein(a: str, b: str) -> int:
    """Edit distance: the fewest single-character insertions, deletions and substitutions from a to b."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


ANLS_THRESHOLD = 0.5  # a normalised distance at or above this scores 0 (DocVQA's and AVA-Bench's tau)


def anls(pred: str, gold: str, params: Params) -> float:
    pred, gold = pred.lower(), gold.lower()
    longest = max(len(pred), len(gold))
    distance = levenshtein(pred, gold) / longest if longest else 0.0
    return 1.0 - distance if distance < ANLS_THRESHOLD else 0.0


def count_soft(pred: int, gold: int, params: Params) -> float:
    return 1.0 / (1.0 + abs(pred - gold))


def cell_tolerance(pred: tuple[int, int], gold: tuple[int, int], params: Params) -> float:
    if pred == gold:
        return 1.0
    if NO_CELL in (pred, gold):
        return 0.0
    tolerance = params.get("tolerance", 1)
    return float(abs(pred[0] - gold[0]) <= tolerance and abs(pred[1] - gold[1]) <= tolerance)


def cell_distance(pred: tuple[int, int], gold: tuple[int, int], params: Params) -> float:
    if pred == gold:
        return 1.0
    if NO_CELL in (pred, gold):
        return 0.0
    sigma = params.get("sigma_scale", 0.25) * math.hypot(params["rows"], params["cols"])
    d2 = (pred[0] - gold[0]) ** 2 + (pred[1] - gold[1]) ** 2
    return max(math.exp(-d2 / (2.0 * sigma**2)) - params.get("beta", 0.3), 0.0)


def _clicks(value: Any) -> tuple:
    return value.cells if isinstance(value, Submission) else value


def set_f1(pred: Any, gold: Any, params: Params) -> float:
    pred, gold = _clicks(pred), _clicks(gold)
    if not _clean_clicks(pred, params):
        return 0.0
    predicted, truth = set(pred), set(gold)
    if not predicted and not truth:
        return 1.0
    return 2.0 * len(predicted & truth) / (len(predicted) + len(truth))


def click_submit_soft(pred: Submission, gold: Submission, params: Params) -> float:
    unique_in_grid = {cell for cell in pred.cells if _in_grid(cell, params)}
    consistent = float(pred.count == len(unique_in_grid))
    return (set_f1(pred, gold, params) + count_soft(pred.count, gold.count, params) + consistent) / 3.0


def region_ok(pred: Any, gold: Any, params: Params) -> float:
    clicks = {cell for cell in _clicks(pred) if _in_grid(cell, params)}
    if not clicks:
        return 1.0
    inside = {cell for cell in clicks if params["region_row_min"] <= cell[0] <= params["region_row_max"]
              and params["region_col_min"] <= cell[1] <= params["region_col_max"]}
    allowed = clicks - inside if params.get("region_exclude", 0) else inside
    return len(allowed) / len(clicks)


def gated(pred: Any, gold: Any, params: Params) -> float:
    """A rubric's gated score (scoring/rubric.py): `pred` is the judged RubricScore; undecided counts 0 here."""
    return pred.score or 0.0


STRICT_CLICKS = ("strict_cell_set", "strict_cell_set_count")
REGION_PARAMS = ("region_row_min", "region_row_max", "region_col_min", "region_col_max")

RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        Rule("exact", ("integer", "letters", "yes_no", "cell", "cell_set", "strict_count", *STRICT_CLICKS,
                       "box", "number", "choice", "text"), (), exact),
        Rule("count_soft", ("integer", "strict_count"), (), count_soft),
        Rule("cell_tolerance", ("cell",), (), cell_tolerance),
        Rule("cell_distance", ("cell",), ("rows", "cols"), cell_distance),
        Rule("set_f1", ("cell_set", *STRICT_CLICKS), (), set_f1),
        Rule("click_submit_soft", ("strict_cell_set_count",), (), click_submit_soft),
        Rule("region_ok", STRICT_CLICKS, ("rows", "cols", *REGION_PARAMS), region_ok),
        Rule("gated", ("rubric",), (), gated),
        Rule("iou", ("box",), (), iou),
        Rule("giou", ("box",), (), giou, invalid=-1.0),
        Rule("delta125", ("number",), (), delta125),
        Rule("abs_rel", ("number", "integer"), (), abs_rel, invalid=1.0),
        Rule("anls", ("text",), (), anls),
    )
}


def check_rule(name: str, answer_type: str, params: Params) -> Rule:
    """The rule, after checking it applies to the answer type and has its parameters."""
    rule = RULES.get(name)
    if rule is None:
        raise RuleError(f"unknown scoring rule {name!r}; known: {', '.join(RULES)}")
    if answer_type not in rule.answer_types:
        raise RuleError(f"rule {name!r} does not score {answer_type} answers (it scores {', '.join(rule.answer_types)})")
    missing = [p for p in rule.required_params if p not in params]
    if missing:
        raise RuleError(f"rule {name!r} needs scoring params {', '.join(missing)}")
    return rule


def applicable_rules(answer_type: str, params: Params) -> list[str]:
    """Every rule that can score this answer type with these params (all are reported in the JSON)."""
    return [r.name for r in RULES.values() if answer_type in r.answer_types and all(p in params for p in r.required_params)]


def apply(name: str, pred: Any, gold: Any, params: Params) -> float:
    """Score one answer; an invalid (None) answer scores 0 (an error rule's `invalid`: its worst value)."""
    return RULES[name].invalid if pred is None else RULES[name].score(pred, gold, params)

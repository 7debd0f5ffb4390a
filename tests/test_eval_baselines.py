"""Baselines (constant, random, oracle) and the report's statistics, on records composed without rendering."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from stim3d.eval.baselines import baseline_answers
from stim3d.eval.stats import fit_logistic, wilson
from stim3d.scenes.families import FAMILIES
from stim3d.scoring.records import Answer, Record, Scoring
from stim3d.scoring.report import score, score_record
from tests.helpers import family_records


def with_gold(record: Record, qid: str, kind: str, gold, rule: str, options=None) -> Record:
    return record.model_copy(update={"question_id": qid, "answer": Answer(type=kind, gold=gold, options=options),
                                     "scoring": Scoring(rule=rule)})


def test_the_oracle_scores_every_answer_type_of_every_family_at_100_percent():
    records = [r for family in sorted(FAMILIES) for r in family_records(family)]
    base = records[0]
    records.append(with_gold(base, "cell-set", "cell_set", [[1, 2], [3, 4]], "set_f1"))
    records.append(with_gold(base, "cell-set-empty", "cell_set", [], "set_f1"))
    kinds = {r.answer.type for r in records}
    assert kinds >= {"integer", "letters", "yes_no", "cell", "cell_set", "rubric", "strict_count", "strict_cell_set",
                     "strict_cell_set_count", "box", "number", "choice"}
    oracle = baseline_answers("baseline:oracle", records)
    for record in records:
        result = score_record(record, oracle(record))
        assert result.correct and result.score == 1.0, (record.family, record.answer.type, result.response, result.reason)


def _counting(golds_by_family: dict[str, list[int]]) -> list[Record]:
    base = family_records("shape_count")[0]
    return [with_gold(base.model_copy(update={"family": family}), f"{family}-{i}", "integer", gold, "count_soft")
            for family, golds in golds_by_family.items() for i, gold in enumerate(golds)]


def test_the_constant_baseline_answers_each_question_types_most_frequent_gold():
    records = _counting({"fam_a": [2, 2, 3, 1, 2], "fam_b": [3, 1, 1, 3]})  # fam_b ties: "1" sorts before "3"
    constant = baseline_answers("baseline:constant", records)
    assert [constant(r) for r in records] == ["2"] * 5 + ["1"] * 4
    report = score(records, {r.question_id: constant(r) for r in records})
    assert report.rows[0].to_dict()["accuracy"] == pytest.approx((3 + 2) / 9)


def test_the_random_baseline_is_seeded_and_draws_from_the_golds_of_the_type():
    records = _counting({"fam_a": [i % 4 for i in range(400)]})
    first = baseline_answers("baseline:random", records, seed=7)
    answers = [first(r) for r in records]
    assert answers == [baseline_answers("baseline:random", list(reversed(records)), seed=7)(r) for r in records]
    assert answers != [baseline_answers("baseline:random", records, seed=8)(r) for r in records]
    assert set(answers) == {"0", "1", "2", "3"}
    hits = sum(a == str(r.answer.gold) for a, r in zip(answers, records))
    assert 0.15 < hits / 400 < 0.35  # uniform over 4 golds: 1/4, sd 0.022
    assert max(Counter(answers).values()) < 140


def test_an_unknown_baseline_is_refused():
    with pytest.raises(ValueError, match="unknown baseline"):
        baseline_answers("baseline:median", [])


def test_wilson_intervals_match_published_values():
    # Newcombe (1998), Table I: 5/10 -> 0.2366-0.7634; 0/10 -> 0-0.2775; 10/10 -> 0.7225-1.
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_logistic_fit_recovers_a_known_threshold_and_slope():
    levels = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    n = 10_000
    correct = [round(n / (1 + math.exp(-(10 * x - 4)))) for x in levels]  # threshold 0.4, slope 10
    fit = fit_logistic(levels, correct, [n] * len(levels))
    assert fit is not None
    assert fit.threshold == pytest.approx(0.4, abs=0.005) and fit.slope == pytest.approx(10, rel=0.02)
    separated = fit_logistic([0.2, 0.4, 0.6, 0.8], [0, 0, 5, 5], [5] * 4)  # all wrong, then all right
    assert separated is not None and 0.4 < separated.threshold < 0.6
    assert fit_logistic([0.5, 0.5], [1, 2], [3, 3]) is None  # one level: nothing to fit

"""Agreement between participants on the questions several of them answered.

Each question seen by two or more people is a group of ratings (one category per
person: the answer as the scoring core parsed it, or whether it was right). Two numbers:

- **mean pairwise agreement**: per question, the share of pairs of people who gave the same
  category, averaged over questions (1 = everyone agreed everywhere);
- **Fleiss' kappa**: the same agreement corrected for what chance would give with the
  categories' overall frequencies, in the form that allows a different number of raters
  per question (Fleiss 1971, eq. 2-6 with n_i raters of item i): P_i = sum_c n_ic (n_ic - 1)
  / (n_i (n_i - 1)), P = mean P_i, p_c = sum_i n_ic / sum_i n_i, P_e = sum_c p_c^2,
  kappa = (P - P_e) / (1 - P_e). None when chance agreement is already total (one category).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def _usable(groups: Sequence[Sequence[str]]) -> list[Counter]:
    return [Counter(g) for g in groups if len(g) >= 2]


def _pair_share(counts: Counter) -> float:
    n = sum(counts.values())
    return sum(k * (k - 1) for k in counts.values()) / (n * (n - 1))


def pairwise_agreement(groups: Sequence[Sequence[str]]) -> float | None:
    """Mean over questions (two or more ratings) of the share of agreeing pairs; None when there is no such question."""
    usable = _usable(groups)
    return sum(_pair_share(c) for c in usable) / len(usable) if usable else None


def fleiss_kappa(groups: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa over questions with two or more ratings (any number each); None when undefined."""
    usable = _usable(groups)
    if not usable:
        return None
    observed = sum(_pair_share(c) for c in usable) / len(usable)
    totals: Counter = Counter()
    for counts in usable:
        totals.update(counts)
    ratings = sum(totals.values())
    chance = sum((k / ratings) ** 2 for k in totals.values())
    if chance >= 1 - 1e-12:
        return None
    return (observed - chance) / (1 - chance)

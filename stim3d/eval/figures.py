"""PNG figures of a score report (matplotlib, headless): bars with intervals, accuracy by axis, psychometric curve."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stim3d.eval.stats import Cell, Logistic


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede the pyplot import
    import matplotlib.pyplot as plt

    return plt


def _errors(cells: Sequence[Cell]) -> list[list[float]]:
    """(below, above) distances from each accuracy to its interval's ends, as matplotlib's xerr/yerr take them."""
    # max(0, ...): at 0 or n right, rounding can put the end a hair inside the accuracy, and matplotlib refuses that
    return [[max(0.0, c.accuracy - c.interval[0]) for c in cells], [max(0.0, c.interval[1] - c.accuracy) for c in cells]]


def bars(cells: Sequence[Cell], title: str, path: Path) -> Path:
    """Horizontal bars of accuracy per group with 95 % Wilson intervals."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 1.4 + 0.35 * len(cells)), dpi=100)
    y = np.arange(len(cells))
    ax.barh(y, [c.accuracy for c in cells], xerr=_errors(cells), color="#4878a8", capsize=3)
    ax.set_yticks(y, [f"{c.label} (n={c.n})" for c in cells])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy (exact match), 95 % Wilson interval")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def curve(cells: Sequence[Cell], axis: str, path: Path, fit: Logistic | None = None, title: str = "") -> Path:
    """Accuracy against a difficulty axis (points with intervals), with the fitted logistic and its 50 % point."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.6), dpi=100)
    x = np.array([float(c.label) for c in cells])
    ax.errorbar(x, [c.accuracy for c in cells], yerr=_errors(cells), fmt="o", color="#4878a8", capsize=3,
                label="accuracy (95 % Wilson)")
    if fit is not None:
        grid = np.linspace(x.min(), x.max(), 200)
        ax.plot(grid, fit(grid), color="#c05030", label="logistic fit")
        threshold = fit.threshold
        if threshold is not None and x.min() <= threshold <= x.max():
            ax.axvline(threshold, color="#c05030", linestyle=":", label=f"50 % at {threshold:.3g}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(axis)
    ax.set_ylabel("accuracy")
    ax.set_title(title or f"accuracy by {axis}")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path

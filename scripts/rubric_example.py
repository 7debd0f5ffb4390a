"""The worked example of docs/rubrics.md: one item with its describe question, rendered small in Cycles.

    .venv/bin/python scripts/rubric_example.py            # renders docs/images/rubric_example.png, prints Markdown
    .venv/bin/python scripts/rubric_example.py --no-render  # the Markdown only (rubric and scores need no render)

The Markdown printed is what docs/rubrics.md shows under "A worked example": the
golden caption, the rubric (Must-Right and Easy-Wrong items with their facts), and
three hand-written descriptions of this image scored by the reference judge.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from stim3d.render.batch.records import records_for
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item, Provenance
from stim3d.scoring.judges import reference_judge
from stim3d.scoring.report import score
from stim3d.scoring.rubric import Rubric, RubricScore, judge_rubric
from stim3d.scoring.rubric_report import format_rubric

ROOT = Path(__file__).resolve().parents[1]
FAMILY, PARAMS, ENTROPY = "shape_count", {"min_visibility": 0.4, "n_shape_types": 3}, [2026, 0, 0]
WIDTH, HEIGHT, SAMPLES = 320, 240, 16

# Written by looking at docs/images/rubric_example.png (not from the rubric).
DESCRIPTIONS = {
    "careful": (
        "Five objects are on a grey floor: a blue sphere, a blue torus lying flat, a red torus, a yellow cone and "
        "a black cone. So there is one sphere, two cones and two tori. The red torus is partly hidden behind the "
        "blue sphere. The blue torus is to the left of the blue sphere. The blue torus is also in front of the blue "
        "sphere. The red torus is to the left of the black cone. There are no cubes or cylinders."
    ),
    "miscounts": (
        "There are two spheres, a blue one and a red one, plus a blue ring, a yellow cone and a black cone. "
        "The blue ring is to the left of the blue sphere, and the red ball is partly hidden behind it."
    ),
    "hallucinates": (
        "I see one blue sphere, one red torus, one blue torus, one yellow cone and one black cone, so two cones "
        "and two tori. A small gray cylinder stands behind the black cone. The red torus is mostly hidden behind "
        "the blue sphere. The blue torus is to the left of the blue sphere."
    ),
}


def example_item(width: int = WIDTH, height: int = HEIGHT) -> Item:
    return make_item(FAMILY, PARAMS, ENTROPY, "rubric-example", Frame(width, height), question_sets=("default", "describe"))


def rubric_of(item: Item) -> Rubric:
    gold = item.questions[-1].gold
    assert isinstance(gold, Rubric)
    return gold


def render(item: Item, png: Path, samples: int = SAMPLES) -> None:
    """Render the item with Cycles (stim3d.render_items) and copy its image to `png`."""
    import stim3d

    with tempfile.TemporaryDirectory() as tmp:
        (folder,) = stim3d.render_items([item], Path(tmp), {"engine": "cycles", "samples": samples, "denoise": True,
                                                             "width": item.scene.camera.width,
                                                             "height": item.scene.camera.height})
        png.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "image.png", png)


def _verdicts(judged: RubricScore) -> str:
    failed = [v.item_id for v in judged.verdicts if v.satisfied is False]
    undecided = [v.item_id for v in judged.verdicts if v.satisfied is None]
    return (f"fails {', '.join(f'`{i}`' for i in failed) or 'nothing'}"
            + (f"; undecided {', '.join(f'`{i}`' for i in undecided)}" if undecided else ""))


def _shown(value: float | None) -> str:
    return "undecided" if value is None else f"{value:.3f}"


def markdown(item: Item) -> str:
    rubric = rubric_of(item)
    lines = [f"Golden caption:\n\n> {rubric.caption}\n", "| part | id | type | statement | fact | weight |",
             "|---|---|---|---|---|---|"]
    for part, items in (("Must-Right", rubric.must_right), ("Easy-Wrong", rubric.easy_wrong)):
        for r in items:
            fact = json.dumps(r.fact, separators=(", ", ": "))
            lines.append(f"| {part} | `{r.id}` | {r.type} | {r.statement} | `{fact}` | {r.weight:g} |")
    lines += ["", "| description | Must-Right | Easy-Wrong fraction | gated score | judge's verdicts |", "|---|---|---|---|---|"]
    for name, text in DESCRIPTIONS.items():
        judged = judge_rubric(rubric, text, reference_judge)
        passed = {True: "pass", False: "fail", None: "undecided"}[judged.must_right_passed]
        lines.append(f"| {name} | {passed} | {_shown(judged.easy_wrong_fraction)} | {_shown(judged.score)} | "
                     f"{_verdicts(judged)} |")
    lines += ["", "The descriptions:", ""] + [f"- **{name}**: {text}" for name, text in DESCRIPTIONS.items()]
    lines += ["", "`stim3d score`'s rubric table for the three, each as the answer to a copy of the item:", "", "```",
              *score_table(item), "```"]
    return "\n".join(lines) + "\n"


def score_table(item: Item) -> list[str]:
    """The rubric lines `stim3d score` prints when each description answers its own copy of the item."""
    provenance = Provenance(stim3d_version="example", engine="cycles", samples=SAMPLES, device="cpu", denoise=True)
    records, predictions = [], {}
    for index, text in enumerate(DESCRIPTIONS.values()):
        copy = item.model_copy(update={"item_id": f"rubric-example-{index}", "provenance": provenance,
                                       "questions": [item.questions[-1].model_copy(
                                           update={"question_id": f"rubric-example-{index}-describe"})]})
        (record,) = records_for(copy, f"items/{copy.item_id}/image.png", "0" * 64)
        records.append(record)
        predictions[record.question_id] = text
    return format_rubric(score(records, predictions).questions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "rubric_example.png")
    parser.add_argument("--no-render", action="store_true", help="print the Markdown without rendering")
    args = parser.parse_args(argv)
    item = example_item()
    if not args.no_render:
        render(item, args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    print(markdown(item), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

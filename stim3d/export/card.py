"""The dataset card written beside an imagefolder export: `DEST/README.md`.

Its YAML header is what `datasets` and the Hugging Face Hub read: the licence, the
splits' data files and `dataset_info.features` (typed columns, export/hf_features.py).
Its body says what a reader of the data needs: which configs made it (each batch's
batch.json), how many images and questions per split and family, and the constant
baselines (the best constant answer per question type, overall and per grid cell),
so a score can be read against what ignoring the image would reach.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from stim3d.export.common import ExportedItem
from stim3d.render.batch.folder import MANIFEST, BatchFolder
from stim3d.render.batch.summary import constant_baselines
from stim3d.version import __version__

DATA_LICENSE = "cc-by-4.0"  # the generated images and annotations; stim3d itself is GPL-3.0-or-later


CITATION = """@software{stim3d,
  title = {stim3d: photorealistic 3D stimuli with exact ground truth for visual-perception benchmarks},
  version = {%s},
  license = {GPL-3.0-or-later}
}"""


def size_category(rows: int) -> str:
    """The Hub's size band for a dataset of `rows` examples (its `size_categories` vocabulary)."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < limit:
            return label
    return "n>1M"


def split_bytes(dest: Path, splits: Sequence[str]) -> dict[str, int]:
    """Bytes on disk of each split's folder (metadata, images, masks): the card's `num_bytes`."""
    return {s: sum(p.stat().st_size for p in (Path(dest) / s).rglob("*") if p.is_file()) for s in splits}


def card_header(split_rows: dict[str, int], feature_list: list[dict[str, Any]],
                num_bytes: dict[str, int] | None = None) -> dict[str, Any]:
    """The card's YAML header. `num_bytes` per split (declared so `datasets` need not warn that it is unknown);
    the questions' language is English; the size band counts question rows."""
    splits = sorted(split_rows)
    sizes = num_bytes or {}
    return {
        "license": DATA_LICENSE,
        "language": ["en"],
        "size_categories": [size_category(sum(split_rows.values()))],
        "pretty_name": "stim3d stimuli",
        "task_categories": ["visual-question-answering"],
        "configs": [{"config_name": "default", "data_files": [{"split": s, "path": f"{s}/**"} for s in splits]}],
        "dataset_info": {"features": feature_list,
                         "splits": [{"name": s, "num_bytes": sizes.get(s, 0), "num_examples": split_rows[s]}
                                    for s in splits],
                         "download_size": sum(sizes.values()), "dataset_size": sum(sizes.values())},
    }


def _configs(batches: Sequence[Path]) -> list[str]:
    blocks = []
    for batch in batches:
        try:
            manifest = BatchFolder(batch).manifest()
        except (OSError, ValueError):
            manifest = None
        if manifest is not None:
            blocks.append(yaml.safe_dump(manifest["config"], sort_keys=False).rstrip())
        else:
            blocks.append(f"# {Path(batch).name}: no readable {MANIFEST}")
    return blocks


def card_text(batches: Sequence[Path], items: list[ExportedItem], split_rows: dict[str, int],
              feature_list: list[dict[str, Any]], num_bytes: dict[str, int] | None = None) -> str:
    records = [r for entry in items for r in entry.records]
    lines = ["---", yaml.safe_dump(card_header(split_rows, feature_list, num_bytes), sort_keys=False).rstrip(), "---", "",
             "# stim3d stimuli", "",
             f"Rendered 3D stimuli with exact ground truth, exported by stim3d {__version__}: one row per question, "
             "with the image, its object-index mask (pixel value = object id, 0 = ground/background), the objects' "
             "measured visibility, occlusion and truncation, and the question's difficulty.", "",
             "`item_id`, `question_id` and `id` carry the batch prefix and are unique across merged batches; "
             "`source_item_id` / `source_question_id` are the ids in the batch's own records.jsonl.", "",
             "## Counts", "", "| split | family | images | questions |", "|---|---|---:|---:|"]
    images = Counter((r.split, r.family) for entry in items for r in {r.split: r for r in entry.records}.values())
    questions = Counter((r.split, r.family) for r in records)
    for split, family in sorted(questions):
        lines.append(f"| {split} | {family} | {images[(split, family)]} | {questions[(split, family)]} |")
    lines += ["", "## Constant baselines", "",
              "The accuracy of always giving the most frequent gold answer, per question type; per cell: the best "
              "constant within each grid cell of the config (what a model reaches that knows the cell's parameters).",
              "", "| question type | questions | best constant | accuracy | distinct answers | per cell |",
              "|---|---:|---|---:|---:|---:|"]
    for b in constant_baselines(records):
        lines.append(f"| {b.question_type} | {b.questions} | {b.best_answer} | {b.accuracy:.3f} | "
                     f"{b.distinct_answers} | {b.per_cell_accuracy:.3f} |")
    lines += ["", "## Configs", ""]
    for batch, block in zip(batches, _configs(batches)):
        lines += [f"`{Path(batch).name}`:", "", "```yaml", block, "```", ""]
    lines += ["## Licence", "",
              f"The images and annotations: {DATA_LICENSE.upper()}. stim3d, which generated them, is licensed "
              "GPL-3.0-or-later (its LICENSE file); the licence of a generator does not extend to its output.", "",
              "## Citation", "", "```bibtex", CITATION % __version__, "```", ""]
    return "\n".join(lines)


def write_card(dest: Path, batches: Sequence[Path], items: list[ExportedItem], split_rows: dict[str, int],
               feature_list: list[dict[str, Any]]) -> None:
    """DEST/README.md, written after the splits so their sizes are known."""
    num_bytes = split_bytes(dest, list(split_rows))
    (Path(dest) / "README.md").write_text(card_text(batches, items, split_rows, feature_list, num_bytes))

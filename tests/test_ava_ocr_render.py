"""AVA-3D text through Cycles (one tiny batch): every character visible where the ground truth says it is.

- Every character's box on the face (scenes/surfaces.py `text_boxes`), sampled on a grid,
  lands on the sign in the renderer's own object-index mask: no stroke hidden or cut;
- each box holds ink (pixels well below the paper's luminance), and the sign's face
  outside the boxes holds none: the text is drawn where the ground truth puts it;
- the recorded cap height is at least the family's floor on the image;
- the records carry the `text` answer, and gold answers score 1.0 in exact match and ANLS.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.cli import main
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.markers import RAW_IMAGE
from stim3d.scenes.families.ava.ava_ocr import character_samples
from stim3d.scenes.families.ava.ava_sign import face_points_px
from stim3d.scenes.surfaces import text_boxes
from stim3d.scoring.records import answer_text, read_records

pytestmark = pytest.mark.bpy

WIDTH = 320
CONFIG = f"""\
seed: 8
render: {{engine: cycles, width: {WIDTH}, height: 240, samples: 4, denoise: false}}
tasks:
  - family: ava_ocr
    count: 3
    params: {{size_range: [1.8, 2.1], length: [3, 4], fill: [0.9, 1.0], contrast: [0.9, 1.0], min_char: 0.03,
             max_view_deg: 20, max_distractors: 2}}
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ava_ocr")
    (folder / "ocr.yaml").write_text(CONFIG)
    assert main(["render", str(folder / "ocr.yaml"), "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def pixels(sign, camera, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    px = face_points_px(sign, camera, x, y)
    return np.floor(px[..., 1]).astype(int), np.floor(px[..., 0]).astype(int)


def test_every_character_is_visible_inked_and_nothing_else_is(batch):
    folders = sorted((batch / "items").iterdir())
    assert len(folders) == 3
    for folder in folders:
        item, mask = load_item(folder), load_mask(folder)
        sign = next(o for o in item.scene.objects if "text" in o.attributes)
        text, height = sign.attributes["text"], sign.attributes["text_height_m"]
        camera = item.scene.camera
        samples = character_samples(text, height)
        rows, cols = pixels(sign, camera, samples[..., 0], samples[..., 1])
        assert (mask[rows, cols] == sign.id).all(), folder.name  # every character on the sign in the mask
        lum = np.asarray(Image.open(folder / RAW_IMAGE).convert("L"), dtype=float)
        boxes = text_boxes(text, height)
        x, y = np.meshgrid(*(np.linspace(-0.45, 0.45, 91) * sign.size,) * 2)
        near_text = np.zeros(x.shape, bool)
        for x0, y0, x1, y1 in boxes:
            pad = 0.15 * height  # an edge pixel mixes the glyph with the paper around it
            near_text |= (x > x0 - pad) & (x < x1 + pad) & (y > y0 - pad) & (y < y1 + pad)
        r, c = pixels(sign, camera, x, y)
        off_text = ~near_text & (mask[r, c] == sign.id)  # the face where the mask shows it (an occluder may not)
        paper = np.median(lum[r[off_text], c[off_text]])
        assert (lum[r[off_text], c[off_text]] > paper - 40).all(), folder.name  # no ink off the text
        for i in range(len(text)):
            inked = lum[rows[i], cols[i]].min()
            assert inked < paper - 60, (folder.name, text[i], inked, paper)  # every character carries ink
        assert item.difficulty["char_height_px"] >= 0.03 * WIDTH


def test_gold_answers_score_full_marks_in_exact_and_anls(batch, tmp_path):
    records = read_records(batch / "records.jsonl")
    assert {r.answer.type for r in records} == {"text"} and {r.scoring.rule for r in records} == {"anls"}
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(
        json.dumps({"question_id": r.question_id, "response": answer_text(r.answer.type, r.answer.gold).lower()})
        + "\n" for r in records))
    assert main(["score", str(batch), str(predictions), "--by", "ability"]) == 0
    report = json.loads(predictions.with_suffix(".scores.json").read_text())
    rows = {(row["key"], row["value"]): row for row in report["rows"]}
    assert rows[("ability", "ocr")]["accuracy"] == 1.0 and rows[("ability", "ocr")]["rules"]["anls"] == 1.0


def test_exports_carry_the_text_answer_and_lmms_eval_scores_it_by_anls(batch, tmp_path):
    import importlib.util

    import pandas as pd
    import yaml
    from datasets import load_dataset

    assert main(["export", "vlmevalkit", str(batch), "--to", str(tmp_path / "vlm")]) == 0
    table = pd.read_csv(next((tmp_path / "vlm").glob("*.tsv")), sep="\t", keep_default_na=False)
    records = read_records(batch / "records.jsonl")
    assert list(table["answer"]) == [r.answer.gold for r in records] and set(table["answer_type"]) == {"text"}
    assert main(["export", "imagefolder", str(batch), "--to", str(tmp_path / "hf")]) == 0
    metadata = pd.read_parquet(tmp_path / "hf" / "test" / "metadata.parquet")
    assert sorted(metadata["answer"]) == sorted(r.answer.gold for r in records)
    assert set(metadata["answer_type"]) == {"text"} and set(metadata["scoring_rule"]) == {"anls"}
    assert main(["export", "lmms-eval", str(batch), "--to", str(tmp_path / "lmms")]) == 0
    spec = importlib.util.spec_from_file_location("ocr_utils", tmp_path / "lmms" / "utils.py")
    assert spec is not None and spec.loader is not None
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!function", lambda ld, node: ld.construct_scalar(node))  # hooks are named, not used
    config = yaml.load((tmp_path / "lmms" / "stim3d.yaml").read_text(), Loader=loader)
    dataset = load_dataset(config["dataset_path"], **config["dataset_kwargs"])[config["test_split"]]
    for doc in dataset:
        gold = utils.doc_to_target(doc)
        assert utils.process_results(doc, [gold.lower()]) == {"exact_match": 1.0, "score": 1.0}
        wrong = gold[:-1] + ("X" if gold[-1] != "X" else "Y")  # one substitution in 3-4 characters
        result = utils.process_results(doc, [wrong])
        assert result["exact_match"] == 0.0 and result["score"] == pytest.approx(1 - 1 / len(gold))

"""Exports to the harnesses, read back as each harness reads them.

VLMEvalKit and lmms-eval are not installed here (each pulls a deep-learning stack),
so each export is read the way its harness does: the TSV with pandas
(`pd.read_csv(path, sep="\\t")`, VLMEvalKit's `load` for .tsv) and its base64 image
decoded with Pillow; the dataset class imported against stand-ins for the two
VLMEvalKit names it uses; the task YAML parsed with a loader that, like lmms-eval's,
turns `!function utils.NAME` into that function of utils.py; the dataset loaded
with `datasets.load_dataset("imagefolder", ...)` from the YAML's own fields.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from stim3d.cli import main
from stim3d.export.vlmevalkit import tsv_row
from stim3d.scoring.records import answer_text, read_records
from tests.helpers import family_records, run_cli


@pytest.fixture
def batch(tiny_batch, tmp_path) -> Path:
    shutil.copytree(tiny_batch, tmp_path / "batch")
    return tmp_path / "batch"


def _import(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.bpy
def test_vlmevalkit_tsv_reads_back_with_pandas_and_its_dataset_class_scores_like_stim3d(batch, tmp_path, monkeypatch):
    dest = tmp_path / "vlm"
    assert main(["export", "vlmevalkit", str(batch), "--to", str(dest)]) == 0
    data = pd.read_csv(dest / "stim3d.tsv", sep="\t")
    records = read_records(batch / "records.jsonl")
    assert list(data["index"]) == list(range(len(records)))
    assert list(data["question"]) == [r.prompt for r in records]
    assert [str(a) for a in data["answer"]] == [answer_text(r.answer.type, r.answer.gold) for r in records]
    assert list(data["category"]) == [r.family for r in records]
    for row, record in zip(data.itertuples(), records):
        decoded = Image.open(io.BytesIO(base64.b64decode(row.image)))
        with Image.open(batch / record.image.path) as original:
            assert np.array_equal(np.asarray(decoded), np.asarray(original))

    # The dataset class, against stand-ins for vlmeval.dataset.image_vqa.ImageVQADataset and vlmeval.smp.load.
    image_vqa = types.ModuleType("vlmeval.dataset.image_vqa")
    image_vqa.ImageVQADataset = type("ImageVQADataset", (), {})
    smp = types.ModuleType("vlmeval.smp")
    smp.load = lambda path: pd.read_csv(path, sep="\t")
    for name, module in {"vlmeval": types.ModuleType("vlmeval"), "vlmeval.dataset": types.ModuleType("vlmeval.dataset"),
                         "vlmeval.dataset.image_vqa": image_vqa, "vlmeval.smp": smp}.items():
        monkeypatch.setitem(sys.modules, name, module)
    dataset_class = _import(dest / "stim3d_dataset.py", "stim3d_dataset").Stim3DDataset
    predictions = data.copy()
    predictions["prediction"] = [a if i % 2 == 0 else "99" for i, a in enumerate(data["answer"].astype(str))]
    predictions.to_csv(tmp_path / "pred.tsv", sep="\t", index=False)
    table = dataset_class().evaluate(str(tmp_path / "pred.tsv"))
    assert table.iloc[0]["group"] == "all" and table.iloc[0]["accuracy"] == pytest.approx(0.5)  # every other answer


def test_a_choice_question_fills_the_option_columns_and_answers_with_the_option():
    record = family_records("ava_color")[0]
    row = tsv_row(0, record, "aGk=")
    options = record.answer.options
    assert options and [row[letter] for letter in "ABCDEFGH"[:len(options)]] == options
    assert row["answer"] == record.answer.gold and row["question"] == record.prompt


class LmmsLoader(yaml.SafeLoader):
    """A YAML loader that, like lmms-eval's, resolves `!function utils.NAME` (constructor added per test)."""


@pytest.mark.bpy
def test_lmms_eval_task_loads_its_dataset_and_its_hooks_score_like_stim3d(batch, tmp_path):
    from datasets import load_dataset

    dest = tmp_path / "lmms"
    assert main(["export", "lmms-eval", str(batch), "--to", str(dest)]) == 0
    utils = _import(dest / "utils.py", "utils")
    loader = type("Loader", (LmmsLoader,), {})
    loader.add_constructor("!function", lambda ld, node: getattr(utils, ld.construct_scalar(node).split(".", 1)[1]))
    config = yaml.load((dest / "stim3d.yaml").read_text(), Loader=loader)
    assert config["output_type"] == "generate_until" and config["test_split"] == "test"
    assert {m["metric"] for m in config["metric_list"]} == {"exact_match", "score"}
    dataset = load_dataset(config["dataset_path"], **config["dataset_kwargs"])[config["test_split"]]
    records = read_records(batch / "records.jsonl")
    assert len(dataset) == len(records)
    by_source = {r.question_id: r for r in records}
    for doc in dataset:
        record = by_source[doc["source_question_id"]]
        (visual,) = config["doc_to_visual"](doc)
        with Image.open(batch / record.image.path) as original:
            assert np.array_equal(np.asarray(visual), np.asarray(original.convert("RGB")))
        assert config["doc_to_text"](doc) == record.prompt
        assert config["doc_to_text"](doc, {"pre_prompt": "Look. "}) == "Look. " + record.prompt
        target = config["doc_to_target"](doc)
        assert config["process_results"](doc, [target]) == {"exact_match": 1.0, "score": 1.0}
        wrong = config["process_results"](doc, [str(record.answer.gold + 2)])
        assert wrong["exact_match"] == 0.0 and wrong["score"] == pytest.approx(1 / 3)  # count SOFT: 1 / (1 + 2)


SPLIT_CONFIG = """\
seed: 4
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    splits: {train: 2, test: 3}
    params: {n_shape_types: 2, max_instances: 2}
"""


@pytest.mark.bpy
def test_a_batch_made_with_splits_exports_to_lmms_eval_whole_or_by_split(tmp_path):
    """A batch made with `splits:` exports to lmms-eval as one task per split over one dataset, or, with
    `--split NAME`, as one task of that split alone; every format takes --split, and an unknown split is refused in
    one line naming the batch's splits."""
    from datasets import load_dataset

    from tests.batch_support import stim3d

    (tmp_path / "c.yaml").write_text(SPLIT_CONFIG)
    done = stim3d("render", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "b"), "--quiet")
    assert done.returncode == 0, done.stderr
    batch = tmp_path / "b"
    per_split = {s: sum(r.split == s for r in read_records(batch / "records.jsonl")) for s in ("train", "test")}
    assert per_split["train"] > 0 and per_split["test"] > 0

    def task(dest: Path, name: str) -> tuple[dict, object]:
        loader = type("Loader", (LmmsLoader,), {})
        loader.add_constructor("!function", lambda ld, node: ld.construct_scalar(node))
        config = yaml.load((dest / f"{name}.yaml").read_text(), Loader=loader)
        return config, load_dataset(config["dataset_path"], **config["dataset_kwargs"])

    code, _, err = run_cli("export", "lmms-eval", str(batch), "--to", str(tmp_path / "all"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "all").glob("*.yaml")) == ["stim3d_test.yaml", "stim3d_train.yaml"]
    for split in ("train", "test"):
        config, dataset = task(tmp_path / "all", f"stim3d_{split}")
        assert config["task"] == f"stim3d_{split}" and config["test_split"] == split
        assert len(dataset[split]) == per_split[split]

    code, _, err = run_cli("export", "lmms-eval", str(batch), "--split", "test", "--to", str(tmp_path / "test"))
    assert code == 0, err
    assert [p.name for p in (tmp_path / "test").glob("*.yaml")] == ["stim3d.yaml"]
    config, dataset = task(tmp_path / "test", "stim3d")
    assert config["test_split"] == "test" and list(dataset) == ["test"] and len(dataset["test"]) == per_split["test"]

    code, out, err = run_cli("export", "coco", str(batch), "--split", "train", "--to", str(tmp_path / "coco"))
    assert code == 0 and "2 images" in out, err
    code, out, err = run_cli("export", "bop", str(batch), "--split", "val", "--to", str(tmp_path / "bop"))
    assert code == 2 and not (tmp_path / "bop").exists()
    assert err.strip().splitlines()[-1].endswith("no item of split 'val': the batches hold test, train")

"""The hand-off record: its checked-in JSON Schema, what every record carries, and how readers treat bad ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from stim3d.render.batch.records import records_for
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item, Provenance, Question
from stim3d.scoring.records import (
    RECORD_SCHEMA_VERSION,
    SCHEMA_PATH,
    Answer,
    Record,
    read_records,
    record_json_schema,
    record_schema_text,
)

ROOT = Path(__file__).resolve().parents[1]
FAKE_SHA = "ab" * 32


def rendered(item: Item) -> Item:
    """The item as if rendered: records need provenance, nothing else from the renderer."""
    provenance = Provenance(stim3d_version="test", blender_version=None, engine="raster", samples=1, device="cpu",
                            denoise=False)
    return item.model_copy(update={"provenance": provenance})


def item_of(family: str, index: int = 0) -> Item:
    return rendered(make_item(family, {}, [11, 0, index], f"{family}-t0-{index:05d}", Frame(320, 240)))


def flat_keys(params: dict) -> set[str]:
    keys = set()
    for name, value in params.items():
        if isinstance(value, (list, tuple)):
            keys |= {f"{name}.{i}" for i in range(len(value))}
        else:
            keys.add(name)
    return keys


def test_checked_in_schema_matches_the_model():
    assert SCHEMA_PATH.read_text() == record_schema_text(), (
        "scoring/schema/record.schema.json drifted from the Record model: run "
        "`stim3d schema --out scoring/schema/record.schema.json`, and bump RECORD_SCHEMA_VERSION if a field changed"
    )
    checked_in = json.loads(SCHEMA_PATH.read_text())
    assert checked_in["properties"]["schema_version"]["default"] == RECORD_SCHEMA_VERSION


def test_schema_command_prints_the_checked_in_schema():
    result = subprocess.run([sys.executable, "-m", "stim3d", "schema"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == SCHEMA_PATH.read_text()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_writes_records_that_validate_against_the_checked_in_schema(family):
    schema = json.loads(SCHEMA_PATH.read_text())
    item = item_of(family)
    records = records_for(item, f"items/{item.item_id}/image.png", FAKE_SHA)
    assert [r.question_id for r in records] == [q.question_id for q in item.questions]
    for record in records:
        jsonschema.validate(json.loads(record.model_dump_json()), schema)
        question = next(q for q in item.questions if q.question_id == record.question_id)
        assert record.answer.gold == question.gold and record.answer.type == question.answer_type
        assert record.prompt.startswith(question.text) and len(record.prompt) > len(question.text)
        assert (record.image.width, record.image.height) == (320, 240)
        assert record.provenance.seed_entropy == [11, 0, 0]
        # every control parameter of the family, and the family's own measured values
        assert flat_keys(item.params) <= set(record.difficulty), flat_keys(item.params) - set(record.difficulty)
        for key, value in item.difficulty.items():
            assert record.difficulty[key] == value


def test_records_of_one_scene_are_linked():
    item = item_of("shape_count")
    second = Question(question_id=f"{item.item_id}-q1", text="How many cubes are in the scene?", answer_type="integer",
                      gold=sum(o.shape == "cube" for o in item.scene.objects), subject={"shape": "cube"})
    item = item.model_copy(update={"questions": [*item.questions, second]})
    first, other = records_for(item, "items/x/image.png", FAKE_SHA)
    assert first.scene_id == other.scene_id == item.item_id
    assert first.sibling_question_ids == [other.question_id] and other.sibling_question_ids == [first.question_id]
    # an item derived from another (an occlusion-sweep level) shares its source's scene id
    level = item.model_copy(update={"item_id": "level-1", "difficulty": {**item.difficulty, "source_item_id": item.item_id}})
    assert {r.scene_id for r in records_for(level, "items/level-1/image.png", FAKE_SHA)} == {item.item_id}


def test_cell_records_carry_the_grid_size_for_the_distance_rule():
    item = item_of("shape_count")
    cell = Question(question_id=f"{item.item_id}-q9", text="Which cell is odd?", answer_type="cell", gold=(2, 3))
    item = item.model_copy(update={"questions": [cell], "difficulty": {**item.difficulty, "rows": 5, "cols": 7}})
    (record,) = records_for(item, "items/x/image.png", FAKE_SHA)
    assert record.scoring.rule == "cell_tolerance"
    assert record.scoring.params == {"tolerance": 1, "rows": 5, "cols": 7}


@pytest.mark.parametrize("answer_type, gold", [
    ("integer", -1), ("integer", "3"), ("integer", True), ("letters", "q p"), ("yes_no", "maybe"),
    ("yes_no", True), ("cell", (2, -1)), ("cell_set", [(1, 2), (1, 2)]), ("cell_set", [(0, 1)]),
])
def test_a_gold_that_does_not_fit_its_answer_type_is_refused(answer_type, gold):
    with pytest.raises(ValidationError, match="not a valid"):
        Answer(type=answer_type, gold=gold)


def test_reader_names_the_line_of_a_bad_record(tmp_path):
    item = item_of("shape_count")
    (record,) = records_for(item, "items/x/image.png", FAKE_SHA)
    good = record.model_dump_json()
    path = tmp_path / "records.jsonl"

    path.write_text(good + "\n" + good.replace(f'"schema_version":"{record.schema_version}"', '"schema_version":"2.0"') + "\n")
    with pytest.raises(ValueError, match=r"line 2: record schema_version '2.0' is not readable"):
        read_records(path)

    old = json.loads(good)
    old["schema_version"] = "1.0"
    del old["scene_id"]
    path.write_text(json.dumps(old) + "\n")
    with pytest.raises(ValueError, match="line 1: scene_id: Field required"):
        read_records(path)

    path.write_text(good + "\n{not json\n")
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_records(path)

    for constant in ("NaN", "Infinity", "-Infinity"):  # Python's reader takes them; strict readers do not
        edited = json.loads(good)
        edited["difficulty"]["least_visibility"] = "CONSTANT"
        path.write_text(json.dumps(edited).replace('"CONSTANT"', constant) + "\n")
        with pytest.raises(ValueError, match=f"line 1: {constant} is not a number JSON allows"):
            read_records(path)
    with pytest.raises(ValidationError, match="finite number"):  # nor is one taken from Python
        Record.model_validate({**json.loads(good), "difficulty": {"least_visibility": float("nan")}})

    path.write_text(good + "\n\n" + good + "\n")
    assert len(read_records(path)) == 2


def test_schema_is_a_valid_json_schema_that_rejects_unknown_fields():
    schema = record_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    item = item_of("form_constancy")
    (record,) = records_for(item, "items/x/image.png", FAKE_SHA)
    data = json.loads(record.model_dump_json())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "surprise": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in data.items() if k != "answer"}, schema)

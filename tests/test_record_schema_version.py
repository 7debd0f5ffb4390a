"""The records' JSON Schema requires schema_version and accepts only the major version stim3d reads."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from stim3d.render.batch.records import records_for
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Provenance
from stim3d.scoring.records import RECORD_SCHEMA_VERSION, SCHEMA_PATH, RecordVersionError, parse_record, version_for


def a_record() -> dict:
    item = make_item("shape_count", {}, [1, 0, 0], "shape_count-t0-00000", Frame(96, 72))
    provenance = Provenance(stim3d_version="test", blender_version=None, engine="raster", samples=1, device="cpu",
                            denoise=False)
    (record,) = records_for(item.model_copy(update={"provenance": provenance}), "items/x/image.png", "ab" * 32)
    return json.loads(record.model_dump_json())


def test_schema_and_reader_agree_on_schema_version():
    schema = json.loads(Path(SCHEMA_PATH).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    record = a_record()
    assert record["schema_version"] == version_for(record["answer"]["type"])  # the lowest version that holds it
    assert record["schema_version"].split(".")[0] == RECORD_SCHEMA_VERSION.split(".")[0]
    validator.validate(record)
    major = RECORD_SCHEMA_VERSION.split(".")[0]
    for version in (f"{int(major) + 1}.0", "1", "one.two", f"{major}.x"):
        assert not validator.is_valid({**record, "schema_version": version}), version
        with pytest.raises((RecordVersionError, ValueError)):
            parse_record({**record, "schema_version": version})
    assert validator.is_valid({**record, "schema_version": f"{major}.99"})  # a later minor is readable
    missing = {k: v for k, v in record.items() if k != "schema_version"}
    assert not validator.is_valid(missing)
    with pytest.raises(RecordVersionError):
        parse_record(missing)

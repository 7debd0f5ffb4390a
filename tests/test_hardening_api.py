"""Bad arguments to the Python API get a ConfigError with one line naming the argument (issue 25 item 8).

Before, these were raw exceptions from deep inside (a list of params, seed -1), misleading
(questions='default' iterated letter by letter, rays_per_pixel=0 failing late as an
unmet visibility), or silently accepted (seed=1.7 truncated to 1; load_batch taking a
foreign folder as an empty batch, or dropping an item with a truncated image while
keeping its records).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stim3d.api import compose, load_batch, render_batch
from stim3d.render.batch.config import ConfigError

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "batch_70581f6" / "batch"


def one_line(exc: pytest.ExceptionInfo, *words: str) -> None:
    message = str(exc.value)
    assert "\n" not in message, message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"params": [("max_instances", 2)]}, ("params", "mapping", "list")),
    ({"seed": -1}, ("seed = -1", "at least 0")),
    ({"seed": 1.7}, ("seed = 1.7", "whole number")),
    ({"seed": True}, ("seed = True", "whole number")),
    ({"questions": "default"}, ("questions = 'default'", "list")),
    ({"rays_per_pixel": 0}, ("rays_per_pixel = 0", "at least 1")),
    ({"rays_per_pixel": 9}, ("rays_per_pixel = 9", "1-8")),
    ({"width": 4}, ("width = 4", "at least 8")),
])
def test_compose_names_a_bad_argument_in_one_line(kwargs, words):
    with pytest.raises(ConfigError) as exc:
        compose("shape_count", **{"params": {"max_instances": 2}, **kwargs})
    one_line(exc, *words)


def test_a_numpy_integer_seed_is_a_whole_number():
    np = pytest.importorskip("numpy")
    assert compose("shape_count", {"max_instances": 2}, seed=np.int64(3)).seed_entropy[0] == 3


def test_render_batch_names_a_config_of_the_wrong_type(tmp_path):
    with pytest.raises(ConfigError) as exc:
        render_batch([{"family": "shape_count"}], tmp_path / "out")  # type: ignore[arg-type]
    one_line(exc, "config", "list")
    assert not (tmp_path / "out").exists()


def copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "batch")
    return tmp_path / "batch"


def test_load_batch_names_a_corrupt_summary(tmp_path):
    batch = copy(tmp_path)
    (batch / "summary.json").write_text('{"items": 2,')
    with pytest.raises(ConfigError) as exc:
        load_batch(batch)
    one_line(exc, str(batch / "summary.json"), "corrupt")


def test_load_batch_names_corrupt_records(tmp_path):
    batch = copy(tmp_path)
    (batch / "records.jsonl").write_bytes(b"\xff\xfe not text\n")
    with pytest.raises(ConfigError) as exc:
        load_batch(batch)
    one_line(exc, str(batch / "records.jsonl"))


def test_load_batch_refuses_a_foreign_folder(tmp_path):
    (tmp_path / "photos" / "items" / "holiday").mkdir(parents=True)
    (tmp_path / "photos" / "items" / "holiday" / "beach.jpg").write_bytes(b"jpeg")
    with pytest.raises(ConfigError) as exc:
        load_batch(tmp_path / "photos")
    one_line(exc, "not a stim3d batch folder")


def test_load_batch_leaves_out_an_item_with_a_truncated_image_and_its_records(tmp_path):
    batch = copy(tmp_path)
    image = batch / "items" / "shape_count-t0-00001" / "image.png"
    image.write_bytes(image.read_bytes()[:40])
    loaded = load_batch(batch)
    assert [item.item_id for item in loaded.items] == ["shape_count-t0-00000"]
    assert [record.item_id for record in loaded.records] == ["shape_count-t0-00000"]
    assert "checksum" in loaded.skipped["shape_count-t0-00001"]


def test_load_batch_reads_the_fixture_whole(tmp_path):
    loaded = load_batch(FIXTURE)
    assert [item.item_id for item in loaded.items] == ["shape_count-t0-00000", "shape_count-t0-00001"]
    assert len(loaded.records) == 2 and loaded.skipped == {}
    assert loaded.summary == json.loads((FIXTURE / "summary.json").read_text())
    assert loaded.image_path("shape_count-t0-00000") == FIXTURE / "items" / "shape_count-t0-00000" / "image.png"
    with pytest.raises(ConfigError, match="item id"):
        loaded.image_path("../x")


def test_a_folder_given_as_config_is_called_a_folder(tmp_path):
    from stim3d.render.batch.config import load_config

    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path)
    one_line(exc, str(tmp_path), "is a folder; give the config's YAML file")


def test_a_config_piped_through_dev_stdin_is_read(tmp_path):
    from tests.batch_support import ROOT

    config = (FIXTURE.parent / "config.yaml").read_text()
    result = subprocess.run([sys.executable, "-m", "stim3d", "validate", "/dev/stdin"], input=config, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "no such config file" not in result.stderr

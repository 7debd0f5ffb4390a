"""Per-object masks as files (`render: {object_masks: true}`, render/object_masks.py).

masks/<id>_visible.png is the object's part of mask.png, masks/<id>_amodal.png its whole
in-frame silhouette cast alone; both agree with item.json's ground truth, are covered by
checksums.json (a changed mask file makes the item render again) and survive a resume.
Without the setting nothing changes: no masks/ folder, no new key in the settings' JSON.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from stim3d.api import compose, render_items
from stim3d.render.batch.folder import CHECKSUMS, verify_item
from stim3d.render.batch.item_folder import load_mask
from stim3d.render.settings import RenderSettings
from stim3d.scenes.colors import named
from stim3d.scenes.model import GroundTruth, Item, StudioLook
from stim3d.scenes.object_library import library_object
from stim3d.scenes.visibility import measure
from tests.helpers import resting

pytestmark = pytest.mark.bpy
SETTINGS = {"engine": "workbench", "width": 64, "height": 48, "object_masks": True}


def _item() -> Item:
    """A composed mug partly hidden by a cube in front of it, and a sphere."""
    base = compose("shape_count", {"max_instances": 2}, seed=1, width=64, height=48)
    objects = [library_object(1, "mug", 1.4, 0.0, 1.0, 200.0, named("red")),
               resting(2, "cube", "blue", 0.3, -0.8, 0.8), resting(3, "sphere", "green", -1.8, 0.0, 0.9)]
    scene = base.scene.model_copy(update={"objects": objects, "look": StudioLook()})
    return base.model_copy(update={"item_id": "masks-1", "scene": scene,  # its question only makes a record to export
                                   "ground_truth": GroundTruth(objects=measure(scene).truths)})


def _png(path) -> np.ndarray:
    return np.asarray(Image.open(path)) > 0


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    out = tmp_path_factory.mktemp("out")
    (folder,) = render_items([_item()], out, SETTINGS)
    return out, folder


def test_visible_and_amodal_masks_agree_with_the_ground_truth(rendered):
    _, folder = rendered
    item = Item.model_validate_json((folder / "item.json").read_text())
    mask = load_mask(folder)
    assert sorted(p.name for p in (folder / "masks").iterdir()) == sorted(
        f"{i}_{kind}.png" for i in (1, 2, 3) for kind in ("amodal", "visible"))
    for truth in item.ground_truth.objects:
        visible, amodal = _png(folder / "masks" / f"{truth.id}_visible.png"), _png(folder / "masks" / f"{truth.id}_amodal.png")
        assert visible.shape == amodal.shape == (48, 64)
        assert np.array_equal(visible, mask == truth.id)
        assert amodal.sum() == round(truth.amodal_px * (1.0 - truth.truncation))
        assert not (visible & ~amodal).any()  # what is seen lies inside the whole silhouette
    mug = item.ground_truth.of(1)
    assert mug.visibility < 0.95 and _png(folder / "masks" / "1_amodal.png").sum() > _png(folder / "masks" / "1_visible.png").sum()
    assert [p.name for p in item.scene.object(1).source.parts] == ["body", "handle"]  # the composed object's parts


def test_masks_are_checksummed_and_resume(rendered):
    out, folder = rendered
    sums = json.loads((folder / CHECKSUMS).read_text())
    assert "masks/1_amodal.png" in sums and verify_item(folder) is None
    stamp = (folder / "item.json").stat().st_mtime_ns
    render_items([_item()], out, SETTINGS)
    assert (folder / "item.json").stat().st_mtime_ns == stamp  # done: skipped
    Image.fromarray(np.zeros((48, 64), np.uint8)).save(folder / "masks" / "2_visible.png")
    assert "masks/2_visible.png does not match its checksum" in verify_item(folder)
    render_items([_item()], out, SETTINGS)
    assert verify_item(folder) is None and (folder / "item.json").stat().st_mtime_ns != stamp


def test_without_the_setting_nothing_changes(tmp_path):
    assert "object_masks" not in RenderSettings().model_dump(mode="json")
    (folder,) = render_items([_item()], tmp_path, {**SETTINGS, "object_masks": False})
    assert not (folder / "masks").exists()
    assert not any("/" in name for name in json.loads((folder / CHECKSUMS).read_text()))


def test_bop_export_models_and_amodal_masks_are_the_composed_objects(rendered, tmp_path):
    from stim3d.export.bop import export_bop
    from stim3d.scenes.meshes import object_mesh

    out, folder = rendered
    export_bop([out], tmp_path / "bop")
    info = json.loads((tmp_path / "bop" / "models" / "models_info.json").read_text())
    (mug_id,) = [k for k, v in info.items() if v["shape"].startswith("composed:mug:")]
    ply = (tmp_path / "bop" / "models" / f"obj_{int(mug_id):06d}.ply").read_text()
    item = Item.model_validate_json((folder / "item.json").read_text())
    assert f"element face {len(object_mesh(item.scene.object(1)).faces)}" in ply
    bop_amodal = _png(tmp_path / "bop" / "test" / "000001" / "mask" / "000000_000000.png")
    assert np.array_equal(bop_amodal, _png(folder / "masks" / "1_amodal.png"))  # one cast, two exports


def test_coco_and_clevr_exports_name_a_composed_object_by_its_library_name(rendered, tmp_path):
    """pycocotools reads the COCO export, where the mug is category `mug` (supercategory composed) with the mug's
    visible pixels as its mask; the CLEVR export writes its shape as `mug`, a Shape the metadata lists and the
    synonyms word as a singular (CLEVR's templates add the plural's "s")."""
    from pycocotools import mask as mask_utils
    from pycocotools.coco import COCO

    from stim3d.export.clevr import export_clevr
    from stim3d.export.coco import export_coco

    out, folder = rendered
    export_coco([out], tmp_path / "coco")
    coco = COCO(str(tmp_path / "coco" / "annotations.json"))
    (mug_category,) = coco.getCatIds(catNms=["mug"])
    assert coco.loadCats(mug_category)[0]["supercategory"] == "composed"
    (annotation,) = coco.loadAnns(coco.getAnnIds(catIds=[mug_category]))
    assert np.array_equal(mask_utils.decode(annotation["segmentation"]).astype(bool), load_mask(folder) == 1)
    assert {coco.loadCats(a["category_id"])[0]["name"] for a in coco.loadAnns(coco.getAnnIds())} == {"mug", "cube", "sphere"}

    export_clevr([out], tmp_path / "clevr")
    meta = json.loads((tmp_path / "clevr" / "metadata.json").read_text())
    synonyms = json.loads((tmp_path / "clevr" / "synonyms.json").read_text())
    (scenes_file,) = (tmp_path / "clevr").glob("CLEVR_*_scenes.json")
    (scene,) = json.loads(scenes_file.read_text())["scenes"]
    assert [o["shape"] for o in scene["objects"]] == ["mug", "cube", "sphere"]
    assert "mug" in meta["types"]["Shape"] and "composed" not in meta["types"]["Shape"]
    assert "cup" in synonyms["mug"] and not any(w.endswith("s") for w in synonyms["mug"])

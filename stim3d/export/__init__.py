"""Dataset exports of rendered batches: Hugging Face imagefolder and COCO instances.

Both read batch folders through their records.jsonl (the hand-off contract) and item
folders, and can merge several batches (shards, or different configs) into one
export. Ids never clash: every item is named `<batch>-<item_id>`, where `<batch>` is
the first 8 hex digits of the batch's config hash (batch.json; shards of one config
share it, so their items merge as one batch), or of the records file's hash when there
is no batch.json. An item met twice (the same batch given twice, overlapping shards)
is exported once if its image is identical, and is an error if it is not.

- imagefolder: `DEST/<split>/metadata.jsonl` with one row per question plus the
  images, so `datasets.load_dataset("imagefolder", data_dir=DEST)` gives one split per
  record split (usually "test"), with the question, prompt and answer as columns.
- coco: `DEST/annotations.json` (COCO instances) plus `DEST/images/`: one image per
  item, one annotation per object with visible pixels in mask.png, category = shape,
  segmentation = RLE of that object's pixels in mask.png, bbox = the modal (visible)
  box of those pixels, area = their count; the ray-cast ground truth (visibility,
  occlusion, truncation, amodal box) rides along as extra keys.

Each export is written into a temporary sibling and renamed into place when complete
(`common.export_folder`).
"""

from stim3d.export.coco import export_coco
from stim3d.export.common import ExportError, ExportReport
from stim3d.export.imagefolder import export_imagefolder

__all__ = ["ExportError", "ExportReport", "export_coco", "export_imagefolder"]

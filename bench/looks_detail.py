"""Does the fine detail a question depends on survive a denoised render? Measured against the reference.

Whole-frame PSNR and SSIM can pass while a small detail is lost: OddGrid's odd cell
differs from its neighbours by a few CIEDE2000 units, ROSE's glossy exception is told
apart only by its highlight, OddGrid's row and column digits are dots a few pixels
wide, AVA's toy car has thin wheels. `detail` compares a candidate render with the
reference on the pixels of those objects (the reference's object-index pass):

- `colour_de_max`: the largest CIEDE2000 between an object's measured colour (median
  of its visible pixels, as render/batch/produce.py measures it) in the candidate and
  in the reference, over objects with at least MIN_PX visible pixels;
- `object_ssim_min`: the smallest SSIM over each such object's bounding box (padded),
  the label digits taken together as one box; `thin_parts_ssim_min` the same over an
  assembly's parts (`part_of`, AVA's car);
- `odd_de` / `odd_de_reference`: the odd cell's measured dE2000 to the median of the
  other cells' measured colours, in the candidate and in the reference (OddGrid);
- `glossy_highlight` / `glossy_highlight_reference`: the glossy objects' highlight
  contrast (99th percentile minus median luminance of their pixels), smallest over
  them (ROSE's `finish` exception);
- `label_contrast` / `label_contrast_reference`: median luminance of the pixels
  around the digits (board or ground) minus that of the digit dots, and `label_ssim` (OddGrid labels).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stim3d.render.batch.produce import measured_colors
from stim3d.scenes.colors import delta_e2000, srgb_to_lab
from stim3d.scenes.model import Item

from .render_quality import luminance, ssim

MIN_PX = 30  # as scenes/look_colours.py MIN_VISIBLE_PX: fewer pixels measure anti-aliasing, not the surface
PAD = 3
MIN_BOX = 11  # the SSIM window (bench/render_quality.py: an 11-tap Gaussian, 'valid' region)


def _box(mask: np.ndarray) -> tuple[slice, slice]:
    """The padded bounding box of `mask`, at least MIN_BOX pixels on a side, inside the image."""
    rows, cols = np.nonzero(mask)
    h, w = mask.shape
    out = []
    for lo, hi, size in ((rows.min(), rows.max(), h), (cols.min(), cols.max(), w)):
        lo, hi = lo - PAD, hi + PAD + 1
        grow = max(0, MIN_BOX - (hi - lo))
        lo, hi = max(0, lo - (grow + 1) // 2), min(size, hi + grow // 2)
        lo = max(0, min(lo, hi - MIN_BOX))
        out.append(slice(int(lo), int(hi)))
    return out[0], out[1]


def _de(a, b) -> float:
    return round(float(delta_e2000(srgb_to_lab(np.asarray(a)), srgb_to_lab(np.asarray(b)))), 2)


def detail(item: Item, image: np.ndarray, reference: np.ndarray, instance_map: np.ndarray) -> dict[str, Any]:
    """Fine-detail figures of `image` against `reference` (module docstring); instance_map is the reference's."""
    objects = {o.id: o for o in item.scene.objects}
    counts = np.bincount(instance_map.ravel(), minlength=max(objects, default=0) + 1)
    seen = [i for i in objects if counts[i] >= MIN_PX]
    mine, theirs = measured_colors(image, instance_map, seen), measured_colors(reference, instance_map, seen)
    out: dict[str, Any] = {"colour_de_max": max((_de(mine[i], theirs[i]) for i in seen), default=0.0)}

    labels = [i for i, o in objects.items() if "label_axis" in o.attributes]
    boxes = {i: _box(instance_map == i) for i in seen if i not in labels}
    label_mask = np.isin(instance_map, labels) if labels else None
    if label_mask is not None and label_mask.any():
        boxes[-1] = _box(label_mask)
    box_ssim = {i: ssim(image[b], reference[b]) for i, b in boxes.items()}
    out["object_ssim_min"] = round(min(box_ssim.values(), default=1.0), 4)
    parts = [i for i in boxes if i > 0 and "part_of" in objects[i].attributes]
    if parts:
        out["thin_parts_ssim_min"] = round(min(box_ssim[i] for i in parts), 4)

    odd = [i for i in seen if objects[i].attributes.get("odd")]
    cells = [i for i in seen if "row" in objects[i].attributes and i not in odd and i not in labels]
    if odd and cells:
        for key, colours in (("odd_de", mine), ("odd_de_reference", theirs)):
            others = np.median([colours[i] for i in cells], axis=0)
            out[key] = min(_de(colours[i], others) for i in odd)

    glossy = [i for i in seen if objects[i].finish == "glossy"]
    if glossy:
        for key, picture in (("glossy_highlight", image), ("glossy_highlight_reference", reference)):
            lum = luminance(picture)
            out[key] = round(min(float(np.percentile(lum[instance_map == i], 99) - np.median(lum[instance_map == i]))
                                 for i in glossy), 1)

    if -1 in boxes and label_mask is not None:
        b = boxes[-1]
        around = ~label_mask[b]
        for key, picture in (("label_contrast", image), ("label_contrast_reference", reference)):
            lum = luminance(picture)[b]
            out[key] = round(float(np.median(lum[around]) - np.median(lum[label_mask[b]])), 1)
        out["label_ssim"] = round(box_ssim[-1], 4)
    return out

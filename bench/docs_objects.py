"""The pictures of docs/objects.md: every composed object of the library, and library objects in photoreal.

The contact sheet: one item per library object (`stim3d.render_items`, 320x240, 16 samples +
denoising): the object alone on the studio stage, 1.6 m at its longest, its front (+Y) turned
30 degrees from the camera so front and side both show; each cell is captioned with the object's
name and its parts. The photoreal scene: a chair, a table, a car, a lamp and a glossy mug in one
item rendered in photoreal (480x360, 32 samples), their accents and glaze (docs/objects.md
"Materials"). Run by `python -m bench.docs --only objects`.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from stim3d.api import render_items
from stim3d.render.batch.folder import IMAGE
from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import COLOR_NAMES, named
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.looks import with_look
from stim3d.scenes.model import GroundTruth, Item, Scene
from stim3d.scenes.object_library import entry, library_object, object_names
from stim3d.scenes.visibility import measure

WIDTH, HEIGHT, COLUMNS, CAPTION = 320, 240, 4, 34
SETTINGS = {"engine": "cycles", "samples": 16, "denoise": True, "width": WIDTH, "height": HEIGHT}
SIZE = 1.6  # metres, every object's longest extent
YAW = 210.0  # the front (+Y) turned towards the camera (at -Y), 30 degrees off


def object_item(index: int, name: str) -> Item:
    """An item showing library object `name` alone (no questions: a picture, not a task)."""
    obj = library_object(1, name, SIZE, 0.0, 0.0, YAW, named(COLOR_NAMES[index % len(COLOR_NAMES)]))
    camera = look_at((1.2, -3.6, 2.0), (0.0, 0.0, 0.5 * obj.location[2] + 0.3), WIDTH, HEIGHT, focal_35mm=38.0)
    scene = Scene(camera=camera, lights=counting_lights(), objects=[obj])
    return Item(item_id=f"object-{name.replace('_', '-')}", family="objects", params={"object": name}, seed=0,
                seed_entropy=[0], scene=scene, ground_truth=GroundTruth(objects=measure(scene).truths), questions=[])


PHOTOREAL = {"engine": "cycles", "samples": 32, "denoise": True, "width": 480, "height": 360, "look": "photoreal"}
# (name, size m, x, y, yaw degrees, colour, finish): the accents of every kind and the mug's glaze in one frame
PHOTOREAL_OBJECTS = [("chair", 2.0, -2.2, 0.0, 30.0, "blue", "matte"), ("car", 2.0, 0.3, 0.5, 60.0, "red", "matte"),
                     ("mug", 1.2, 2.4, -0.5, 200.0, "yellow", "glossy"), ("lamp", 2.4, 0.8, 2.5, 0.0, "green", "matte"),
                     ("table", 2.2, -1.0, 3.0, 10.0, "purple", "matte")]


def photoreal_scene(work: Path) -> Path:
    """Render the library objects' photoreal scene into `work`; returns its image."""
    objects = [library_object(k, name, size, x, y, yaw, named(colour)).model_copy(update={"finish": finish})
               for k, (name, size, x, y, yaw, colour, finish) in enumerate(PHOTOREAL_OBJECTS, start=1)]
    scene = Scene(camera=look_at((0.0, -8.0, 4.0), (0.0, 0.5, 0.8), PHOTOREAL["width"], PHOTOREAL["height"]),
                  lights=counting_lights(), objects=objects)
    item = Item(item_id="objects-photoreal", family="objects", params={}, seed=1, seed_entropy=[7, 1, 0],
                scene=scene, ground_truth=GroundTruth(objects=measure(scene).truths), questions=[])
    return render_items([with_look(item, "photoreal")], work / "photoreal", PHOTOREAL)[0] / IMAGE


def contact_sheet(work: Path) -> Path:
    """Render every library object into `work` and tile the images with captions; returns the PNG."""
    names = object_names()
    folders = render_items([object_item(i, name) for i, name in enumerate(names)], work / "out", SETTINGS)
    rows = -(-len(names) // COLUMNS)
    sheet = Image.new("RGB", (COLUMNS * WIDTH, rows * (HEIGHT + CAPTION)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    for k, (name, folder) in enumerate(zip(names, folders)):
        x, y = (k % COLUMNS) * WIDTH, (k // COLUMNS) * (HEIGHT + CAPTION)
        sheet.paste(Image.open(folder / IMAGE).convert("RGB"), (x, y))
        parts = ", ".join(dict.fromkeys(p.name.split("_")[0] for p in entry(name).parts))
        draw.text((x + 6, y + HEIGHT + 3), name.replace("_", " "), fill=(20, 20, 20), font=font)
        draw.text((x + 6, y + HEIGHT + 17), f"parts: {parts}"[:56], fill=(110, 110, 110), font=font)
    path = work / "objects_contact.png"
    sheet.save(path, format="PNG")
    return path

"""Small builders shared by tests: hand-made scenes with known geometry, sweep items, records without rendering.

Test modules share code through this file and tests/batch_support.py, never by importing one another."""

from __future__ import annotations

import numpy as np

from stim3d.render.batch.records import records_for
from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import PALETTE, named
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.items import make_item
from stim3d.scenes.model import (
    SHAPES,
    Camera,
    GroundTruth,
    Item,
    Light,
    Provenance,
    Question,
    Scene,
    SceneObject,
    Stage,
)
from stim3d.scenes.primitives import axis_angle_quat, unit_dimensions, world_vertices
from stim3d.scenes.visibility import measure
from stim3d.scoring.records import Record


def obj(object_id: int, shape: str, size: float, x: float, y: float, z: float | None = None, color: str = "red") -> SceneObject:
    """An upright object; resting on the ground unless `z` (its centre height) is given."""
    dims = tuple(d * size for d in unit_dimensions(shape))
    return SceneObject(
        id=object_id,
        shape=shape,
        size=size,
        dimensions=dims,
        location=(x, y, dims[2] / 2 if z is None else z),
        color=named(color),
    )


def scene(objects: list[SceneObject], camera: Camera | None = None, width: int = 160, height: int = 120) -> Scene:
    cam = camera or look_at((0.0, -8.0, 5.0), (0.0, 0.0, 0.3), width, height)
    light = Light(location=(3.0, -3.0, 6.0), rotation_quat=(0.92, 0.27, 0.2, 0.18), size=3.0, power_w=800.0)
    return Scene(camera=cam, lights=[light], objects=objects)


# -- scenes for the render backends: the counting families' lights, a few rotated objects ---------------


def resting(object_id, shape, color, x, y, size=1.0, rotation=(1.0, 0.0, 0.0, 0.0), finish="matte") -> SceneObject:
    """An object at (x, y) whose lowest vertex touches the ground, whatever its rotation."""
    lowest = world_vertices(shape, size, (0.0, 0.0, 0.0), rotation)[:, 2].min()
    return SceneObject(
        id=object_id,
        shape=shape,
        size=size,
        dimensions=tuple(d * size for d in unit_dimensions(shape)),
        location=(x, y, -float(lowest)),
        rotation_quat=rotation,
        color=named(color),
        finish=finish,
    )


def mixed_scene(width=64, height=48) -> Scene:
    """Five shapes, an occlusion (cube in front of the sphere), a lying cylinder and a tilted torus."""
    objects = [
        resting(1, "sphere", "red", -1.6, 1.4, 1.2),
        resting(2, "cube", "blue", -1.3, 0.0, 0.9, rotation=axis_angle_quat((0, 0, 1), 30)),
        resting(3, "cone", "green", 2.0, 0.2, 1.0),
        resting(4, "torus", "yellow", 0.4, -1.6, 1.3, rotation=axis_angle_quat((1, 0, 0), 25)),
        resting(5, "cylinder", "purple", 1.0, 1.8, 0.8, rotation=axis_angle_quat((1, 0, 0), 90)),
    ]
    camera = look_at((0.0, -8.0, 5.0), (0.0, 0.0, 0.3), width, height)
    return Scene(camera=camera, lights=counting_lights(), stage=Stage(world_strength=0.3), objects=objects)


def random_scene(rng: np.random.Generator, width=160, height=120, count=9, high_ids=False) -> Scene:
    """`count` random objects, 30 % of them tilted; `high_ids` spreads ids above 255 (16-bit masks)."""
    objects = []
    for object_id in range(1, count + 1):
        shape = str(rng.choice(SHAPES))
        rotation = axis_angle_quat((0, 0, 1), float(rng.uniform(0, 360)))
        if rng.random() < 0.3:
            rotation = axis_angle_quat(rng.normal(size=3), float(rng.uniform(0, 180)))
        objects.append(
            resting(object_id + (300 * (object_id % 2) if high_ids else 0), shape, str(rng.choice(list(PALETTE))),
                    float(rng.uniform(-3, 3)), float(rng.uniform(-2, 2.5)), float(rng.uniform(0.5, 1.4)), rotation)
        )
    camera = look_at((float(rng.uniform(-2, 2)), -8.0, float(rng.uniform(3, 6))), (0.0, 0.0, 0.3), width, height)
    return Scene(camera=camera, lights=counting_lights(), stage=Stage(world_strength=0.3), objects=objects)


# Occlusion sweeps (the sweep and recount tests): a close camera so the target covers hundreds of pixels.
SWEEP_CAMERA = look_at((0.0, -5.0, 3.0), (0.0, 0.0, 0.4), 160, 120)


def three_objects(occluder_shape: str = "cylinder", occluder_size: float = 1.1) -> Scene:
    """Target 1 (a cone in the middle), occluder 2 to the right, a torus 3 to the left."""
    return scene(
        [obj(1, "cone", 1.0, 0.0, 0.0), obj(2, occluder_shape, occluder_size, 1.8, -1.2, color="blue"),
         obj(3, "torus", 0.8, -1.8, 0.6, color="green")],
        camera=SWEEP_CAMERA,
    )


def counting_item(scene_: Scene, shape: str = "cone", min_visibility: float = 0.0) -> Item:
    """A shape_count item over a hand-made scene; its gold is the number of `shape` objects."""
    question = Question(question_id="hand-q0", text=f"How many {shape}s are in the scene?", answer_type="integer",
                        gold=sum(o.shape == shape for o in scene_.objects), subject={"shape": shape})
    truth = measure(scene_)
    return Item(item_id="hand", family="shape_count", params={"min_visibility": min_visibility}, seed=5,
                seed_entropy=[5], scene=scene_, ground_truth=GroundTruth(objects=truth.truths), questions=[question],
                difficulty={"n_shape_types": 3, "min_visibility": min_visibility, "least_visibility": 1.0})


# Records composed without rendering, one family at a time (the eval tests).
PROVENANCE = Provenance(stim3d_version="test", blender_version=None, engine="raster", samples=1, device="cpu",
                        denoise=False)
LARGER = {"letters": (320, 240), "odd_grid": (320, 240)}  # their dots and cells need more pixels than 64x48


def family_records(family: str, seed: int = 1) -> list[Record]:
    width, height = LARGER.get(family, (64, 48))
    item = make_item(family, {}, [seed, 0, 0], f"{family}-t0-{seed:05d}", Frame(width, height),
                     question_sets=("default", "describe"))
    return records_for(item.model_copy(update={"provenance": PROVENANCE}), "items/x/image.png", "ab" * 32)


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`stim3d ARGV` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from stim3d.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()

"""Looks: the appearance an item is rendered in, drawn from the item's seed and recorded in item.json.

A look is appearance only. `draw_look` returns a `Look` (scenes/model.py) that the
Blender backend builds into datablocks (render/backends/blender_looks.py); the
scene's geometry, camera and ground truth are never touched, so masks and every
geometric gold are the same in every look of one scene.

- `studio`: the family's own rig and grey stage. Nothing is drawn: `scene.look` is a
  `StudioLook` at its defaults, left out of item.json, so studio items are
  byte-identical to items made before looks existed, unless a render failed a check:
  then the ground's grey (contrast, scenes/look_contrast.py `with_studio_ground`) or a
  re-exposure of the rig (colour, `with_studio_exposure`, at most two) changes the scene
  and is recorded in the `StudioLook`.
- `clevr`: CLEVR's two materials (rubber: diffuse; metal: metallic, low roughness),
  its key, fill and back area lights with uniform jitter of +-1 (scene units) per
  coordinate, and a plain grey ground under a dim grey world. The ground is CLEVR's 0.5 grey;
  a redraw (a colour or contrast check asked for it) takes a lighter or darker grey
  (CLEVR_REDRAW_GROUNDS), whichever stands farther from the objects' colours first.
- `photoreal`: image-based light from one of the CC0 HDRIs that ship with Blender
  (ENVIRONMENTS), turned about +Z and exposure-normalised by its upward irradiance
  (ENVIRONMENT_IRRADIANCE, measured by bench/looks_exposure.py) to a target set for
  the object sides the camera sees (TARGET_IRRADIANCE), and white-balanced by a per-channel gain that makes a grey
  card facing up neutral (ENVIRONMENT_WHITE_BALANCE, from the same bench; a lookup,
  not a draw, so every other draw of the stream is unchanged); an optional sun key light; a procedural ground material
  (GROUND_MATERIALS: planks, tiles, aggregate concrete, marble, each with its pattern's
  drawn parameters) that fades into the environment; object materials from
  OBJECT_MATERIALS with the palette colour as base colour (the matte ones with a low
  base-layer specular, MATTE_SPECULAR, recorded as `params["specular"]`), with rounded-edge shading
  and a worn surface recorded per object (`params`: bevel_m, roughness_variation,
  bump, seed). These pattern, bevel and wear parameters are drawn after everything
  else, so a seed draws the same environment, sun and materials as it did before
  they existed; an older item.json (no such params, older ground names) still renders.

Own random stream: the look's generator is `SeedSequence(item entropy + [LOOK_TAG,
look index, attempt])`, a stream of its own, so drawing a look never changes a
geometry draw, and the look is independent of every gold answer by construction.

Materials and finishes: in families whose objects are independent draws
(`Family.per_object_materials`, the scatter families) every object draws its own material.
Everywhere else (grids, groups, letters and any plug-in family) objects that share
a `finish` share one material, so a material can never single out an odd cell or an
exception. When a scene holds both finishes (ROSE's glossy exception), matte objects
draw only rough, uncoated materials (rubber, plastic) and glossy ones only clear-coated
ones (painted metal, ceramic): the finish stays the visible difference it was in studio.
"""

from __future__ import annotations

import numpy as np

from .lens import draw_lens
from .look_basis import (
    ENVIRONMENT_IRRADIANCE,
    ENVIRONMENT_WHITE_BALANCE,
    ENVIRONMENTS,
    TARGET_IRRADIANCE,
    scene_frame,
    texture_scale,
)
from .look_contrast import ground_tone
from .materials import (
    ACCENT_MATERIALS,
    CLEVR_MATERIALS,
    FADE,
    GROUND_MATERIALS,
    MADE_OF,
    OBJECT_MATERIALS,
    ObjectMaterial,
    wear,
)
from .model import (
    DrawnLook,
    EnvironmentLook,
    GroundLook,
    Item,
    Light,
    Look,
    LookName,
    ObjectLook,
    PartLook,
    Scene,
    SceneObject,
    StudioLook,
    SunLook,
    round6,
)
from .pipeline import draw_pipeline
from .settings import draw_setting

LOOK_TAG = 0x100C  # marks the look's own SeedSequence stream (item entropy + [LOOK_TAG, look, attempt])

EXPOSURE_EV = (-0.25, 0.25)  # per-item exposure jitter around the normalised strength, in stops
SUN_PROBABILITY = 0.5
SUN_SHARE = (0.35, 0.6)  # share of the upward irradiance the sun gives when there is one
SUN_ELEVATION_DEG = (30.0, 65.0)
SUN_ANGLE_DEG = 2.0  # angular diameter: crisp but not aliased shadows


# CLEVR's rig in the camera's frame (x: right, y: toward the camera, z: up), scene units; power in W at scale 1.
CLEVR_LIGHTS = (("key", (2.5, 3.0, 6.0), 2.0, 550.0), ("fill", (-4.5, 2.5, 3.0), 2.0, 150.0),
                ("back", (-1.0, -6.0, 5.0), 1.5, 300.0))
CLEVR_JITTER = 1.0  # CLEVR's key/fill/back light jitter: uniform +-1 per coordinate (scene units)
# The rig's scale is at least this times the objects' half-height, so the key light (6 units up at scale 1) stands
# ten half-heights above their middle and lights a standing board's top and bottom rows within about 1.5x.
CLEVR_HEIGHT_SCALE = 10.0 / 6.0
CLEVR_GROUND = (0.5, 0.5, 0.5)
# A redraw's ground tones (grey levels, sRGB): a fixed grey cannot lift a grey object off a grey ground, so attempt
# k > 0 takes the k-th of these ranked by the least CIEDE2000 between the tone and the scene's object colours
# (scenes/look_contrast.py). Attempt 0 keeps CLEVR's 0.5 grey: an item never redrawn is what it was.
CLEVR_REDRAW_GROUNDS = (0.7, 0.3)


def look_rng(entropy: list[int], name: LookName, attempt: int = 0) -> np.random.Generator:
    """The look's own generator: separate from the item's geometry stream and from the other looks'."""
    from .model import LOOK_NAMES

    return np.random.default_rng(np.random.SeedSequence([*entropy, LOOK_TAG, LOOK_NAMES.index(name), attempt]))


def _aim(location: np.ndarray, target: np.ndarray) -> tuple[float, float, float, float]:
    """Quaternion (w, x, y, z) turning a light's local -Z onto `target` (its local +Y kept up-ish)."""
    from .camera import look_at

    return look_at(tuple(location), tuple(target), 8, 8).rotation_quat


def _uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return round6(rng.uniform(*bounds))


def _object_looks(scene: Scene, family: str, library: dict[str, ObjectMaterial],
                  rng: np.random.Generator) -> list[ObjectLook]:
    """One material per object (`Family.per_object_materials`) or per finish (everywhere else, plug-ins too);
    see the module docstring."""
    from .families import FAMILIES

    both = len({obj.finish for obj in scene.objects}) > 1
    per_object = family in FAMILIES and FAMILIES[family].per_object_materials

    def draw(finish: str) -> tuple[str, float]:
        names = [n for n, m in library.items()
                 if m.pooled and finish in m.finishes and (m.rough or not both or finish != "matte")]
        name = names[int(rng.integers(len(names)))]
        return name, _uniform(rng, library[name].roughness)

    shared: dict[str, tuple[str, float]] = {}
    looks = []
    for obj in scene.objects:
        if per_object:
            name, roughness = draw(obj.finish)
        else:
            if obj.finish not in shared:
                shared[obj.finish] = draw(obj.finish)
            name, roughness = shared[obj.finish]
        material = library[name]
        looks.append(ObjectLook(id=obj.id, material=name, roughness=roughness, metallic=material.metallic,
                                coat=material.coat))
    return looks


def _library_materials(look: ObjectLook, obj: SceneObject, rng: np.random.Generator) -> ObjectLook:
    """A library object's own materials under photoreal (objects.yaml): the material it is made of whatever the draw
    (`made_of`: a mug is glazed ceramic, glossy or satin by its finish) and its accent parts' own materials and
    colours (a chair's wooden legs), each with its wear. Drawn after every other object draw, so an item without
    library objects draws what it drew before them."""
    from .object_library import library

    if obj.source is None or obj.source.kind != "composed" or obj.source.name not in library():
        return look
    entry = library()[obj.source.name]
    if entry.made_of is not None:
        name = MADE_OF[entry.made_of][obj.finish]
        made = OBJECT_MATERIALS[name]
        look = look.model_copy(update={"material": name, "roughness": _uniform(rng, made.roughness),
                                       "metallic": made.metallic, "coat": made.coat})
        look = look.model_copy(update={"params": wear(look, obj.size, rng)})
    drawn: dict[str, PartLook] = {}  # one draw per accent: a table's four legs are the same wood
    parts = {}
    present = {part.name for part in obj.source.parts}  # item.json's own parts (the library entry may have changed)
    for part_name, accent_name in entry.accents().items():
        if part_name not in present:
            continue
        if accent_name not in drawn:
            accent = ACCENT_MATERIALS[accent_name]
            built = OBJECT_MATERIALS[accent.material]
            part = PartLook(accent=accent_name, material=accent.material,
                            srgb=accent.colors[int(rng.integers(len(accent.colors)))],
                            roughness=_uniform(rng, accent.roughness), metallic=built.metallic, coat=built.coat)
            drawn[accent_name] = part.model_copy(update={"params": wear(part, obj.size, rng)})
        parts[part_name] = drawn[accent_name]
    return look.model_copy(update={"parts": parts}) if parts else look


def _clevr_ground(scene: Scene, attempt: int) -> tuple[float, float, float]:
    """CLEVR's grey ground for draw `attempt`: 0.5 grey first, then the redraw tones farthest from the objects."""
    return CLEVR_GROUND if attempt == 0 else ground_tone(scene, CLEVR_REDRAW_GROUNDS, attempt)


def _clevr(scene: Scene, family: str, rng: np.random.Generator, attempt: int = 0) -> DrawnLook:
    centre, scale, right, toward = scene_frame(scene)
    # Aimed at the objects' middle, not their foot, and raised with their height: an OddGrid board stands up to 9.5 m
    # tall, and the rig set on the ground lit its top row up to 12 times brighter than its bottom one (issue 44).
    heights = [obj.location[2] for obj in scene.objects] or [0.0]
    centre = np.array([centre[0], centre[1], (min(heights) + max(heights)) / 2])
    scale = max(scale, CLEVR_HEIGHT_SCALE * (max(heights) - min(heights)) / 2)
    lights = []
    for _name, (x, y, z), size, power in CLEVR_LIGHTS:
        offset = x * right + y * toward + np.array([0.0, 0.0, z]) + rng.uniform(-CLEVR_JITTER, CLEVR_JITTER, 3)
        location = centre + scale * offset
        lights.append(Light(location=tuple(round6(v) for v in location), rotation_quat=_aim(location, centre),
                            size=round6(size * scale), power_w=round6(power * scale * scale)))
    ground = GroundLook(material="plain", srgb=_clevr_ground(scene, attempt), roughness=0.6, scale_m=1.0)
    return DrawnLook(name="clevr", lights=lights, ground=ground, objects=_object_looks(scene, family, CLEVR_MATERIALS, rng))


def _photoreal(scene: Scene, family: str, rng: np.random.Generator, entropy: list[int],
               attempt: int = 0) -> DrawnLook:
    centre, _scale, _right, _toward = scene_frame(scene)
    environment_name = ENVIRONMENTS[int(rng.integers(len(ENVIRONMENTS)))]
    exposure = _uniform(rng, EXPOSURE_EV)
    sun = None
    sun_share = 0.0
    if rng.random() < SUN_PROBABILITY:
        sun_share = _uniform(rng, SUN_SHARE)
        elevation = _uniform(rng, SUN_ELEVATION_DEG)
        sun = SunLook(azimuth_deg=_uniform(rng, (0.0, 360.0)), elevation_deg=elevation,
                      strength=round6(sun_share * TARGET_IRRADIANCE * 2**exposure / np.sin(np.radians(elevation))),
                      angle_deg=SUN_ANGLE_DEG)
    strength = (1.0 - sun_share) * TARGET_IRRADIANCE * 2**exposure / ENVIRONMENT_IRRADIANCE[environment_name]
    environment = EnvironmentLook(name=environment_name, rotation_deg=_uniform(rng, (0.0, 360.0)),
                                  strength=round6(strength), exposure_ev=exposure,
                                  white_balance=ENVIRONMENT_WHITE_BALANCE[environment_name])
    ground_name = list(GROUND_MATERIALS)[int(rng.integers(len(GROUND_MATERIALS)))]
    spec = GROUND_MATERIALS[ground_name]
    half = scene.stage.ground_size / 2.0
    ground = GroundLook(
        material=ground_name, srgb=spec.colors[int(rng.integers(len(spec.colors)))],
        roughness=_uniform(rng, spec.roughness), scale_m=round6(spec.scale_m * texture_scale(scene)),
        centre=(round6(centre[0]), round6(centre[1])),
        fade_start_m=round6(FADE[0] * half), fade_end_m=round6(FADE[1] * half),
        params={"seed": round6(rng.uniform(0.0, 100.0))},
    )
    objects = _object_looks(scene, family, OBJECT_MATERIALS, rng)
    # Drawn last, so the draws above are the ones photoreal made before its second round (same seeds, same
    # environment, sun and object materials): the second round's pattern parameters, bevel and wear.
    params = {**ground.params, **{name: _uniform(rng, bounds) for name, bounds in spec.ranges}}
    for name, values in spec.choices:
        params[name] = float(values[int(rng.integers(len(values)))])
    sizes = {obj.id: obj.size for obj in scene.objects}
    objects = [look.model_copy(update={"params": wear(look, sizes[look.id], rng)}) for look in objects]
    objects = [_library_materials(look, scene.object(look.id), rng) for look in objects]  # after all the above
    ground = ground.model_copy(update={"params": params})
    # The setting (scenes/settings.py) comes from a stream of its own: every draw above is what it was before.
    setting = draw_setting(scene, environment, sun, ground, entropy, attempt)
    return DrawnLook(name="photoreal", environment=environment, sun=sun, ground=ground, objects=objects,
                     setting=setting)


def draw_look(name: LookName, scene: Scene, family: str, entropy: list[int], attempt: int = 0,
              exposure_correction_ev: float = 0.0) -> Look:
    """The look `name` drawn for a scene of `family` from the item's `entropy` (studio: nothing to draw).

    `attempt` > 0 draws again from a fresh stream (a colour or contrast check asked for
    it; clevr also changes its ground's grey); `exposure_correction_ev` scales every
    light of the draw by 2**ev (scenes/look_colours.py `next_draw`: the failing colours
    were measured too bright or too dark). The draws themselves do not depend on it, so
    attempt k uncorrected is what it always was. How many renders an item took is recorded
    on the kept render by render/batch/produce.py (scenes/look_redraws.py `recorded`).
    The result is a pure function of the arguments.
    """
    if name == "studio":
        return StudioLook()
    if name == "clevr":
        look = _clevr(scene, family, look_rng(entropy, name, attempt), attempt)
    else:  # photoreal_raw is photoreal's very draw without the camera after the sensor (scenes/pipeline.py)
        look = _photoreal(scene, family, look_rng(entropy, "photoreal", attempt), entropy, attempt)
        look = look.model_copy(update={"lens": draw_lens(scene, entropy, attempt),
                                       **({"pipeline": draw_pipeline(entropy, attempt)} if name == "photoreal"
                                          else {"name": name})})
    return _exposed(look, exposure_correction_ev, scene.stage.world_strength) if exposure_correction_ev else look


def _scaled(lights: list[Light], gain: float) -> list[Light]:
    """`lights` with every power scaled by `gain`: one exposure step applied to a rig."""
    return [light.model_copy(update={"power_w": round6(light.power_w * gain)}) for light in lights]


def _exposed(look: DrawnLook, ev: float, world_strength: float) -> DrawnLook:
    """`look` with every light scaled by 2**`ev`: clevr's area lights and the stage's world (`world_strength`) that
    fills their shadows, or photoreal's environment and sun; a correction that left the ambient light alone would
    brighten lit faces and not shaded ones."""
    gain = 2.0**ev
    update: dict[str, object] = {"exposure_correction_ev": round6(ev),
                                 "lights": _scaled(look.lights, gain)}
    if look.environment is not None:
        update["environment"] = look.environment.model_copy(
            update={"strength": round6(look.environment.strength * gain)})
    else:
        update["world_strength"] = round6(world_strength * gain)
    if look.sun is not None:
        update["sun"] = look.sun.model_copy(update={"strength": round6(look.sun.strength * gain)})
    if look.setting is not None:  # the setting's own lights: the sky, the window (a dome's albedo gain is a ratio)
        setting = look.setting
        if setting.sky is not None:
            setting = setting.model_copy(update={"sky": setting.sky.model_copy(
                update={"strength": round6(setting.sky.strength * gain)})})
        if setting.room is not None and setting.room.window is not None:
            window = setting.room.window.model_copy(update={"power_w": round6(setting.room.window.power_w * gain)})
            setting = setting.model_copy(update={"room": setting.room.model_copy(update={"window": window})})
        update["setting"] = setting
    return look.model_copy(update=update)


def with_studio_exposure(item: Item, ev: float) -> Item:
    """A studio item with the family's lights and the stage's world scaled by 2**`ev`, the step recorded in its
    `StudioLook`: studio draws no look, so its colour redraws re-expose the scene's own rig (render/batch/produce.py),
    and item.json still renders as drawn."""
    gain = 2.0**ev
    look = item.scene.look
    assert isinstance(look, StudioLook)
    scene = item.scene.model_copy(update={
        "lights": _scaled(item.scene.lights, gain),
        "stage": item.scene.stage.model_copy(update={"world_strength": round6(item.scene.stage.world_strength * gain)}),
        "look": look.model_copy(update={"exposure_correction_ev": round6(ev)})})
    return item.model_copy(update={"scene": scene})


def with_look(item: Item, name: LookName, attempt: int = 0, exposure_correction_ev: float = 0.0) -> Item:
    """`item` in look `name`: the scene gains the drawn look (studio: the family's rig; an item already in studio
    is returned unchanged, whatever its redraws changed)."""
    if name == "studio" and isinstance(item.scene.look, StudioLook):
        return item
    look = draw_look(name, item.scene, item.family, item.seed_entropy, attempt, exposure_correction_ev)
    difficulty = {key: value for key, value in item.difficulty.items() if key != "look"}
    if isinstance(look, DrawnLook):  # `stim3d score --by look` groups by it; studio items keep their difficulty
        difficulty["look"] = look.name
    return item.model_copy(update={"scene": item.scene.model_copy(update={"look": look}), "difficulty": difficulty})

"""What photoreal's settings draw with: the setting's own random draws and where the camera's frame meets the stage.

scenes/settings.py draws a setting of one kind (scenes/setting_room.py, scenes/setting_outdoor.py, or its own
dome); each kind places its stage around the objects' footprint (`footprint`) and where the frame's border and top
row reach (`border_rays`, `plane_hits`, `top_row_reach`), and draws its surfaces (`surface`) from the setting's
stream (`uniform`, `choice`).
"""

from __future__ import annotations

import numpy as np

from .camera import geometry
from .materials import GroundMaterial
from .model import GroundLook, Scene, round6


def uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return round6(rng.uniform(*bounds))


def choice(rng: np.random.Generator, weights: dict[str, float]) -> str:
    names = list(weights)
    p = np.array([weights[n] for n in names], dtype=float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


def surface(rng: np.random.Generator, name: str, spec: GroundMaterial, unit: float,
             centre: tuple[float, float]) -> GroundLook:
    """A procedural surface of material `name` at `unit` scene units per metre, with its pattern's parameters."""
    params = {"seed": uniform(rng, (0.0, 100.0)), **{k: uniform(rng, bounds) for k, bounds in spec.ranges}}
    for k, values in spec.choices:
        params[k] = float(values[int(rng.integers(len(values)))])
    return GroundLook(material=name, srgb=spec.colors[int(rng.integers(len(spec.colors)))],
                      roughness=uniform(rng, spec.roughness), scale_m=round6(spec.scale_m * unit), centre=centre,
                      params=params)


def footprint(scene: Scene, centre: np.ndarray, right: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """(min right, max right, min away, max away) of the objects' bounding spheres in the setting's axes
    (`away` = -toward: positive beyond the centre as the camera sees it)."""
    if not scene.objects:
        return np.zeros(4)
    locations = np.array([obj.location for obj in scene.objects], dtype=float) - centre
    radius = np.array([0.5 * float(np.linalg.norm(obj.dimensions)) for obj in scene.objects])
    across, away = locations @ right, -(locations @ toward)
    return np.array([(across - radius).min(), (across + radius).max(), (away - radius).min(), (away + radius).max()])


def border_rays(scene: Scene, count: int = 24) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rays through the frame's top row and its left and right edges (origins, directions), and the top row's."""
    cam = scene.camera
    geo = geometry(cam)
    xs = np.linspace(0.0, cam.width, count)
    ys = np.linspace(0.0, cam.height, count)
    border_x = np.concatenate([xs, np.zeros(count), np.full(count, float(cam.width))])
    border_y = np.concatenate([np.zeros(count), ys, ys])
    origins, directions = geo.rays(border_x, border_y)
    top_origins, top_directions = geo.rays(xs, np.zeros(count))
    return np.asarray(origins), directions, np.asarray(top_origins), top_directions


def plane_hits(origins, directions, axis: np.ndarray, offset: float) -> np.ndarray:
    """Ray parameters where rays meet the plane {p : p . axis = offset} (inf where parallel or behind)."""
    facing = directions @ axis
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (offset - origins @ axis) / facing
    return np.where((np.abs(facing) > 1e-9) & (t > 0), t, np.inf)


def top_row_reach(scene: Scene, origin: np.ndarray, away: np.ndarray, floor: float) -> float:
    """Where the top row's middle ray meets the plane z = `floor`, as a distance from `origin` along `away`
    (inf when it looks above the horizon)."""
    _origins, _directions, top_origins, top_directions = border_rays(scene)
    t = plane_hits(top_origins, top_directions, np.array([0.0, 0.0, 1.0]), floor)
    finite = np.where(np.isinf(t), 0.0, t)
    reach = np.where(np.isinf(t), np.inf, (top_origins + finite[:, None] * top_directions - origin) @ away)
    return float(np.median(reach))

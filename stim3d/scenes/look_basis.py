"""What the drawn looks and photoreal's settings measure a scene by: its frame and the light levels exposure targets.

scenes/looks.py draws a look and scenes/settings.py a setting around the same scene: both place things
relative to the objects' centre and the camera's horizontal axes (`scene_frame`), scale textures with the
objects (`texture_scale`) and normalise light to the same upward irradiance (TARGET_IRRADIANCE, per map
ENVIRONMENT_IRRADIANCE). They live here, below both, so neither imports the other for them.
"""

from __future__ import annotations

import numpy as np

from .model import Scene

# HDRIs shipped in Blender's datafiles/studiolights/world (CC0; licence text beside them).
# Upward irradiance of each (luminance, the map's units), from `python -m bench.looks_exposure`.
ENVIRONMENT_IRRADIANCE: dict[str, float] = {
    "city": 6.8356, "courtyard": 2.1243, "forest": 4.7362, "interior": 5.6327,
    "night": 0.4991, "studio": 1.5166, "sunrise": 1.6620, "sunset": 2.1852,
}
ENVIRONMENTS: tuple[str, ...] = tuple(ENVIRONMENT_IRRADIANCE)
# White balance of each (a grey card facing up renders neutral): per-channel gain E / E_c on the map's linear RGB,
# E_c its upward irradiance per channel and E the luminance's, so the exposure above is unchanged. From the same
# `python -m bench.looks_exposure` (bench/results/looks_exposure.json); looked up, never drawn.
ENVIRONMENT_WHITE_BALANCE: dict[str, tuple[float, float, float]] = {
    "city": (1.0168, 0.9981, 0.9708), "courtyard": (1.1297, 1.0133, 0.6812), "forest": (1.093, 0.9946, 0.8357),
    "interior": (0.8516, 1.0202, 1.4637), "night": (0.9022, 1.0233, 1.103), "studio": (1.1641, 0.9712, 0.8917),
    "sunrise": (1.1439, 0.9817, 0.8432), "sunset": (1.231, 0.9997, 0.6452),
}
# W/m2 on an upward surface. 2.6 until issue 44 (a white diffuse top face near 0.83 linear); the camera sees mostly
# object sides, which get about half of that, so colours came out ~7 L* dark and desaturated. 1.5 times that centres
# the measured lightness of named objects on their names (median dL* -0.4 over 265 objects of 24 first draws, 1.4: -1.8,
# 1.6 with the old specular: +2.3; bench/results/looks_NOTES.md "Chroma"). A white
# top face now clips; the palette's colours do not leave their name. Recorded per item (the strengths), so an older
# item.json renders as it did.
TARGET_IRRADIANCE = 3.9

REFERENCE_DISTANCE = 9.7  # camera-to-scene distance of the counting families (scenes/families/shared/stage.py)
REFERENCE_SIZE = 0.9  # median object size there (metres)


def scene_frame(scene: Scene) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """(centre, scale, right, toward): where the objects are, how big the scene is relative to the
    counting families' stage, and the camera's horizontal right and toward-camera unit vectors."""
    locations = np.array([obj.location for obj in scene.objects] or [(0.0, 0.0, 0.0)], dtype=float)
    centre = (locations.min(axis=0) + locations.max(axis=0)) / 2
    centre[2] = 0.0
    camera = np.asarray(scene.camera.location, dtype=float)
    scale = max(0.05, float(np.linalg.norm(camera - centre)) / REFERENCE_DISTANCE)
    toward = camera - centre
    toward[2] = 0.0
    norm = float(np.linalg.norm(toward))
    toward = toward / norm if norm > 1e-9 else np.array([0.0, -1.0, 0.0])
    right = np.array([-toward[1], toward[0], 0.0])  # toward x up: the camera's right when it looks at the centre
    return centre, scale, right, toward


def texture_scale(scene: Scene) -> float:
    """How much larger than on the counting families' stage the ground's texture is drawn: the objects' median
    size over theirs (0.9 m), within [0.5, 2], so planks and tiles keep their size next to the objects."""
    sizes = [obj.size for obj in scene.objects] or [REFERENCE_SIZE]
    return float(np.clip(np.median(sizes) / REFERENCE_SIZE, 0.5, 2.0))

"""What the drawn looks and photoreal's settings measure a scene by: its frame and the light levels exposure targets.

scenes/looks.py draws a look and scenes/settings.py a setting around the same scene: both place things
relative to the objects' centre and the camera's horizontal axes (`scene_frame`), scale textures with the
objects (`texture_scale`) and normalise light to the same upward irradiance (TARGET_IRRADIANCE, per map
ENVIRONMENT_IRRADIANCE). They live here, below both, so neither imports the other for them.
"""

from __future__ import annotations

import numpy as np

from .model import Scene

# HDRIs shipped in Blender's datafiles/studiolights/world (CC0; licence text beside them), and the 18 CC0 maps of the
# npm package @pmndrs/assets (Poly Haven originals at 512x256, vendored by scripts/fetch_hdris.sh), named with
# PMNDRS_PREFIX: at 512x256 they light and reflect well but blur as a background, so only the settings that hide
# them use them (scenes/settings.py `kinds_for`).
PMNDRS_PREFIX = "pmndrs_"
# Upward irradiance of each (luminance, the map's units), from `python -m bench.looks_exposure`.
ENVIRONMENT_IRRADIANCE: dict[str, float] = {
    "city": 6.8356, "courtyard": 2.1243, "forest": 4.7362, "interior": 5.6327,
    "night": 0.4991, "studio": 1.5166, "sunrise": 1.6620, "sunset": 2.1852,
    "pmndrs_apartment": 2.0283, "pmndrs_bridge": 3.3358, "pmndrs_city": 4.2166, "pmndrs_dawn": 3.1628,
    "pmndrs_esplanade": 7.2793, "pmndrs_forest": 3.6384, "pmndrs_hall": 4.3303, "pmndrs_lab": 3.8912,
    "pmndrs_lobby": 3.2190, "pmndrs_night": 0.3379, "pmndrs_park": 0.8548, "pmndrs_sky": 4.7827,
    "pmndrs_studio": 13.9132, "pmndrs_sunrise": 1.0461, "pmndrs_sunset": 2.2709, "pmndrs_venice": 3.5628,
    "pmndrs_warehouse": 3.7646, "pmndrs_workshop": 3.6422,
}
ENVIRONMENTS: tuple[str, ...] = tuple(ENVIRONMENT_IRRADIANCE)
# White balance of each (a grey card facing up renders neutral): per-channel gain E / E_c on the map's linear RGB,
# E_c its upward irradiance per channel and E the luminance's, so the exposure above is unchanged. From the same
# `python -m bench.looks_exposure` (bench/results/looks_exposure.json); looked up, never drawn.
ENVIRONMENT_WHITE_BALANCE: dict[str, tuple[float, float, float]] = {
    "city": (1.0168, 0.9981, 0.9708), "courtyard": (1.1297, 1.0133, 0.6812), "forest": (1.093, 0.9946, 0.8357),
    "interior": (0.8516, 1.0202, 1.4637), "night": (0.9022, 1.0233, 1.103), "studio": (1.1641, 0.9712, 0.8917),
    "sunrise": (1.1439, 0.9817, 0.8432), "sunset": (1.231, 0.9997, 0.6452),
    "pmndrs_apartment": (0.8737, 1.0279, 1.1857), "pmndrs_bridge": (0.9332, 1.01, 1.1267),
    "pmndrs_city": (1.0336, 1.0082, 0.85), "pmndrs_dawn": (0.9426, 1.1122, 0.5494),
    "pmndrs_esplanade": (0.8512, 1.0294, 1.3025), "pmndrs_forest": (1.2571, 0.9941, 0.648),
    "pmndrs_hall": (1.0025, 1.0042, 0.9536), "pmndrs_lab": (1.35, 0.9558, 0.7658),
    "pmndrs_lobby": (0.8524, 1.0216, 1.4287), "pmndrs_night": (0.9799, 1.0014, 1.0487),
    "pmndrs_park": (1.5399, 1.0568, 0.39), "pmndrs_sky": (1.0405, 0.9969, 0.9224),
    "pmndrs_studio": (1.131, 0.9825, 0.8584), "pmndrs_sunrise": (1.4737, 1.0016, 0.5095),
    "pmndrs_sunset": (1.1723, 0.9996, 0.6999), "pmndrs_venice": (1.8123, 0.9935, 0.4435),
    "pmndrs_warehouse": (0.9819, 1.0016, 1.0401), "pmndrs_workshop": (0.8672, 1.028, 1.2209),
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

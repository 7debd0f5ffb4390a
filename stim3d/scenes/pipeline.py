"""Photoreal's camera after the sensor, drawn: the parameters render/camera_pipeline.py applies to the render.

A photograph is not the renderer's radiance: a camera rolls its highlights off instead of clipping them,
its lens adds a little veiling glare (which lifts the blacks), darkens the corners and splits red from blue
by a fraction of a pixel at the edges, its sensor adds noise that grows with the signal, and the file is
often a JPEG. Each of these is drawn here per item, from ranges a photographer's camera would show, and
recorded in item.json (`scene.look.pipeline`, scenes/model.py `PipelineLook`); none moves a pixel's
geometry, so masks and golds stay studio's.

Own random stream: `SeedSequence(item entropy + [PIPELINE_TAG, attempt])`, so drawing the pipeline never
changes photoreal's environment, ground or materials, and `photoreal_raw` (the same draw without the
pipeline) is photoreal's scene exactly.

Exposure: photoreal's light is already metered, the way an incident meter meters it: the environment's
strength puts a fixed irradiance on an upward surface (scenes/looks.py TARGET_IRRADIANCE), so the objects'
lit sides land where their albedo says and the named colours read as named. What the Standard view
transform then did wrong was the highlights: a light ground lit that brightly clipped in a third of a
frame's pixels. The tone curve's shoulder (KNEE, WHITE) keeps every value below the exposure's knee as it was
and compresses the range from KNEE to WHITE into the levels up to PEAK, preserving each pixel's hue, so a
bright ground reads as a bright ground instead of a white sheet.
"""

from __future__ import annotations

import numpy as np

from .model import PipelineLook, round6

PIPELINE_TAG = 0x50C4  # marks the pipeline's own SeedSequence stream (item entropy + [PIPELINE_TAG, attempt])
ABERRATION_PX = (0.15, 0.6)  # lateral chromatic aberration at the frame's corners, in pixels
VIGNETTING = (0.08, 0.25)  # the corners' light falloff, as a share (0.25: about 0.4 stop)
FLARE = (0.002, 0.01)  # veiling glare, as a share of the frame's mean
ISOS = (100, 200, 400, 800, 1600)
KNEE = 0.75  # linear: below it the tone curve is the identity (every palette colour's lit side stays as it was)
WHITE = 16.0  # linear: the shoulder reaches the display's white here, four stops over the exposure's white
PEAK = 0.96  # display-linear white level (sRGB 250): JPEG ringing on a bright table stays under 255
# A camera's finer JPEG settings: quality 90-96 at full chroma. A JPEG's chroma rings along saturated objects' edges
# and pushed a channel to 255 on a white table: 1.4 % of an odd_grid frame at quality 85 and 4:2:0, 0.55 % at 85 and
# 4:4:4, 0.31 % at 90 and 4:4:4 (the tone curve itself clips none of it; tests/test_camera_pipeline.py).
JPEG_QUALITY = (90, 96)
JPEG_SUBSAMPLING = "4:4:4"


def draw_pipeline(entropy: list[int], attempt: int = 0) -> PipelineLook:
    """The camera pipeline for draw `attempt` of an item with `entropy`: a pure function of both."""
    rng = np.random.default_rng(np.random.SeedSequence([*entropy, PIPELINE_TAG, attempt]))
    return PipelineLook(
        aberration_px=round6(rng.uniform(*ABERRATION_PX)), vignetting=round6(rng.uniform(*VIGNETTING)),
        flare=round6(rng.uniform(*FLARE)), iso=int(ISOS[int(rng.integers(len(ISOS)))]),
        seed=int(rng.integers(2**31)), knee=KNEE, white=WHITE, peak=PEAK,
        jpeg_quality=int(rng.integers(JPEG_QUALITY[0], JPEG_QUALITY[1] + 1)), jpeg_subsampling=JPEG_SUBSAMPLING)

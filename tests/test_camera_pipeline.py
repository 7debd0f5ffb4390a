"""Photoreal's camera after the sensor (render/camera_pipeline.py, scenes/pipeline.py): what a user relies on.

The pipeline develops the linear render into the image: it must leave every value under the knee exactly as the
Standard view transform shows it (the palette's colours keep their names), roll highlights off without changing
their hue or clipping them, lift no more than glare does, be a pure function of the recorded parameters, and be
drawn from its own stream so photoreal's scene is photoreal_raw's.
"""

from __future__ import annotations

import numpy as np
import pytest

from stim3d.render.camera_pipeline import clipped_share, crushed_share, develop, tone
from stim3d.scenes.colors import linear_to_srgb
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import PipelineLook
from stim3d.scenes.pipeline import ISOS, draw_pipeline

PLAIN = PipelineLook(aberration_px=0.0, vignetting=0.0, flare=0.0, iso=None, seed=0, knee=0.75, white=16.0, peak=0.96)


def _bright_table(seed: int = 3) -> np.ndarray:
    """A 96x128 linear frame like a light table under a bright sky: its far 40 % between 1 and 3 (it clips under
    the Standard transform) with a faint grain, a mid-grey object, a dark shadow."""
    rng = np.random.default_rng(seed)
    frame = np.full((96, 128, 3), 0.18)
    light = np.linspace(1.0, 3.0, 128)[None, :, None] * rng.uniform(0.97, 1.03, (40, 128, 1))
    frame[:40] = light * np.array([1.0, 0.97, 0.92])
    frame[60:80, 20:40] = 0.004
    return frame


def test_values_under_the_knee_are_exactly_what_the_standard_transform_shows():
    linear = np.random.default_rng(1).uniform(0.0, 0.75, (32, 48, 3))
    standard = np.rint(np.clip(linear_to_srgb(linear), 0, 1) * 255).astype(np.uint8)
    assert np.array_equal(develop(linear, PLAIN), standard)


def test_the_shoulder_keeps_a_highlights_hue_is_monotonic_and_reaches_the_peak_at_white():
    orange = np.array([[[2.0, 0.42, 0.003]]])  # an orange lit twice too bright: its red would clip
    toned = tone(orange, 0.75, 16.0, 0.96)
    assert toned.max() < 0.96 and toned[0, 0] / toned[0, 0, 0] == pytest.approx(orange[0, 0] / orange[0, 0, 0])
    ramp = np.linspace(0.0, 40.0, 2001)[:, None, None] * np.ones(3)
    curve = tone(ramp, 0.75, 16.0, 0.96)[:, 0, 0]
    assert np.all(np.diff(curve) >= -1e-12) and curve[ramp[:, 0, 0] >= 16.0] == pytest.approx(0.96)
    near = np.array([0.75 - 2e-6, 0.75 - 1e-6, 0.75 + 1e-6, 0.75 + 2e-6])[:, None, None] * np.ones(3)
    below, above = np.diff(tone(near, 0.75, 16.0, 0.96)[:, 0, 0])[[0, 2]] / 1e-6
    assert below == pytest.approx(1.0) and above == pytest.approx(1.0, abs=1e-3)  # no kink at the knee


def test_a_frame_that_clips_a_third_under_the_standard_transform_clips_under_one_percent_developed():
    """The ava_object frame of the issue clipped 35 % of its pixels; a frame like it, through the drawn pipeline
    of many seeds (noise, glare, vignetting, aberration and JPEG included), clips and crushes under 1 %."""
    frame = _bright_table()
    standard = np.rint(np.clip(linear_to_srgb(frame), 0, 1) * 255).astype(np.uint8)
    assert clipped_share(standard) > 0.3
    for seed in range(6):
        image = develop(frame, draw_pipeline([seed, 0, 0]))
        assert clipped_share(image) <= 0.01 and crushed_share(image) <= 0.01


def _blue_cones_on_a_white_table() -> np.ndarray:
    """A 96x128 linear frame like an odd_grid board: a near-white table on the shoulder (sRGB 236 developed) with a
    grid of saturated blue discs, their edges anti-aliased as a render's are (coverage of 4x4 samples per pixel):
    where a JPEG's chroma rings."""
    table, blue = np.array([0.9, 0.891, 0.873]), np.array([0.02, 0.05, 0.75])
    sub = (np.arange(4) + 0.5) / 4
    rows = (np.arange(96)[:, None] + sub[None, :]).reshape(-1)
    cols = (np.arange(128)[:, None] + sub[None, :]).reshape(-1)
    inside = np.zeros((96 * 4, 128 * 4), bool)
    for cy in range(12, 96, 24):
        for cx in range(10, 128, 21):
            inside |= (rows[:, None] - cy) ** 2 + (cols[None, :] - cx) ** 2 <= 49
    coverage = inside.reshape(96, 4, 128, 4).mean(axis=(1, 3))[..., None]
    return table * (1 - coverage) + blue * coverage


def test_saturated_edges_on_a_white_table_do_not_clip_through_the_drawn_jpeg():
    """The drawn pipelines write full-chroma JPEGs at quality 90-96: at 4:2:0 the chroma ringing along saturated blue
    edges on a white table pushes a channel to 255 in over 1 % of the frame, at the drawn settings it stays within
    the 1 % a frame allows, at the lowest drawn quality too."""
    frame = _blue_cones_on_a_white_table()
    qualities = {draw_pipeline([seed, 0, 0]).jpeg_quality for seed in range(40)}
    assert {draw_pipeline([seed, 0, 0]).jpeg_subsampling for seed in range(40)} == {"4:4:4"}
    assert min(qualities) == 90 and max(qualities) == 96
    for quality in (90, 96):
        assert clipped_share(develop(frame, PLAIN.model_copy(update={"jpeg_quality": quality,
                                                                     "jpeg_subsampling": "4:4:4"}))) <= 0.01
    older = PLAIN.model_copy(update={"jpeg_quality": 90, "jpeg_subsampling": "4:2:0"})
    assert clipped_share(develop(frame, older)) > 0.01


def test_the_pipeline_is_a_pure_function_of_its_parameters_and_each_step_shows():
    frame = _bright_table()
    drawn = draw_pipeline([7, 1, 2])
    assert np.array_equal(develop(frame, drawn), develop(frame, drawn))
    assert drawn == draw_pipeline([7, 1, 2]) and drawn != draw_pipeline([7, 1, 3])
    assert drawn.iso in ISOS and drawn.jpeg_quality is not None
    base = develop(frame, PLAIN).astype(int)
    noisy = develop(frame, PLAIN.model_copy(update={"iso": 1600, "seed": 5})).astype(int)
    assert 0 < np.abs(noisy - base)[48:56].mean() < 4  # signal-dependent grain on the grey, a few levels
    vignetted = develop(frame, PLAIN.model_copy(update={"vignetting": 0.25})).astype(int)
    assert vignetted[-1, -1].sum() < base[-1, -1].sum() and vignetted[48, 64].sum() == pytest.approx(base[48, 64].sum(), abs=3)
    glare = develop(frame, PLAIN.model_copy(update={"flare": 0.01})).astype(int)
    assert glare[70, 30].min() > base[70, 30].min()  # the shadow is lifted


def test_aberration_moves_red_out_and_blue_in_by_under_a_pixel_at_the_corner():
    frame = np.zeros((41, 61, 3))
    frame[:, 55:] = 0.5  # a grey band near the right edge: its left edge fringes
    out = develop(frame, PLAIN.model_copy(update={"aberration_px": 0.6})).astype(int)
    row = out[20]
    assert row[54, 2] > row[54, 0] == 0  # blue's image is smaller: it spills inward past the band's inner edge
    assert row[55, 0] < row[55, 1]  # red's is larger: its edge moved outward, a red-free fringe
    assert np.array_equal(out[:, :50], np.zeros_like(out[:, :50]))  # nothing moves far from the edge


def test_photoreal_draws_its_pipeline_from_its_own_stream_and_photoreal_raw_is_the_same_scene():
    photoreal = make_item("shape_color_count", {}, [11, 0, 4], "p", Frame(64, 48), look="photoreal").scene.look
    raw = make_item("shape_color_count", {}, [11, 0, 4], "p", Frame(64, 48), look="photoreal_raw").scene.look
    assert photoreal.pipeline == draw_pipeline([11, 0, 4]) and raw.pipeline is None and raw.name == "photoreal_raw"
    assert raw.environment == photoreal.environment and raw.objects == photoreal.objects and raw.ground == photoreal.ground

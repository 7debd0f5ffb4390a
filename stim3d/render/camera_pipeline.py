"""Photoreal's camera after the sensor: the linear render developed into the image a camera would write.

`develop(linear, pipeline)` takes the renderer's scene-linear RGB (Blender's Combined pass, denoised, the
look's exposure already in it) and applies the steps `scene.look.pipeline` records (scenes/model.py
`PipelineLook`, drawn by scenes/pipeline.py), in a camera's order:

1. lateral chromatic aberration: red sampled from a frame scaled about the centre by 1 + a, blue by 1 - a,
   `a` giving `aberration_px` at the corners (bilinear, under a pixel: edges get a faint fringe);
2. vignetting: light times 1 - v * r**2, r the distance from the centre with the corners at 1;
3. veiling glare: `flare` times the frame's mean added everywhere (a lens scatters a little of all the
   light it takes in, so no shadow is truly black);
4. sensor noise at `iso`: Gaussian with the variance of shot noise plus read noise, NOISE_GAIN per
   100 ISO (at ISO 100 a mid-grey of 0.18 has a signal-to-noise ratio of 100), from the recorded seed;
5. the tone curve: the identity up to `knee`; above it, each pixel is scaled so its largest channel
   follows a rational shoulder reaching `peak` at `white` with slope 1 at the knee (continuous and smooth),
   the same factor on all three channels, so a highlight keeps its hue and rolls off instead of clipping.
   `peak` sits a few levels under full scale, as a camera's JPEG white does, so the JPEG step's ringing on
   a bright, smooth table does not push it to 255 (at 1.0, 2 % of one bright frame's pixels did);
6. the sRGB encoding, rounded to 8 bits;
7. with `jpeg_quality`, a JPEG round trip through Pillow at that quality and `jpeg_subsampling`.

None of these moves an object: the object-index pass, masks, boxes and golds are the renderer's, and the
colour and contrast checks (scenes/look_redraws.py) run on the developed pixels. `clipped_share` and
`crushed_share` measure a frame the way issue reports and the bench (bench/photoreal_frames.py) do.
"""

from __future__ import annotations

import io

import numpy as np

from stim3d.scenes.colors import linear_to_srgb
from stim3d.scenes.model import PipelineLook

NOISE_GAIN = 1.8e-5  # shot-noise variance per unit signal at ISO 100: std 0.0018 at 0.18 linear
READ_NOISE = 2.0e-4  # read-noise standard deviation at ISO 100, linear
LUMINANCE = np.array([0.2126, 0.7152, 0.0722])  # Rec. 709 / sRGB primaries


def develop(linear: np.ndarray, pipeline: PipelineLook) -> np.ndarray:
    """The (H, W, 3) uint8 sRGB image a camera with `pipeline` writes from the (H, W, 3) scene-linear render."""
    x = np.clip(np.asarray(linear, dtype=np.float64)[..., :3], 0.0, None)
    x = _aberration(x, pipeline.aberration_px)
    x = x * _vignette(x.shape[:2], pipeline.vignetting)[..., None]
    x = x + pipeline.flare * float(np.mean(x @ LUMINANCE))
    if pipeline.iso is not None:
        x = _noise(x, pipeline.iso, pipeline.seed)
    toned = tone(x, pipeline.knee, pipeline.white, pipeline.peak)
    image = np.rint(np.clip(linear_to_srgb(toned), 0.0, 1.0) * 255).astype(np.uint8)
    return image if pipeline.jpeg_quality is None else _jpeg(image, pipeline.jpeg_quality, pipeline.jpeg_subsampling)


def tone(x: np.ndarray, knee: float, white: float, peak: float) -> np.ndarray:
    """The hue-preserving shoulder: pixels whose largest channel m exceeds `knee` are scaled by f(m) / m, where
    f(m) = k + (p - k) * t (1 + a) / (t + a), t = (m - k) / (w - k), a = (p - k) / (w - p): f(k) = k with slope 1,
    f(w) = p; values past `white` stay at `peak`."""
    largest = x.max(axis=-1, keepdims=True)
    over = np.clip((largest - knee) / (white - knee), 0.0, 1.0)
    a = (peak - knee) / (white - peak)
    shoulder = knee + (peak - knee) * over * (1.0 + a) / (over + a)
    gain = np.where(largest > knee, shoulder / np.maximum(largest, 1e-12), 1.0)
    return x * gain


def _grid(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float]:
    """(row offsets, column offsets) from the image centre in pixels (pixel centres), and the corner's radius."""
    height, width = shape[:2]
    rows = np.arange(height, dtype=np.float64)[:, None] - (height - 1) / 2
    cols = np.arange(width, dtype=np.float64)[None, :] - (width - 1) / 2
    return rows, cols, float(np.hypot((height - 1) / 2, (width - 1) / 2)) or 1.0


def _vignette(shape: tuple[int, ...], strength: float) -> np.ndarray:
    rows, cols, corner = _grid(shape)
    return 1.0 - strength * (rows**2 + cols**2) / corner**2


def _aberration(x: np.ndarray, corner_px: float) -> np.ndarray:
    """Red scaled out and blue scaled in about the centre, by `corner_px` pixels at the corners."""
    if corner_px == 0.0:
        return x
    rows, cols, corner = _grid(x.shape[:2])
    out = x.copy()
    for channel, sign in ((0, 1.0), (2, -1.0)):
        scale = 1.0 / (1.0 + sign * corner_px / corner)  # the source point that lands on each output pixel
        out[..., channel] = _bilinear(x[..., channel], rows * scale + (x.shape[0] - 1) / 2,
                                      cols * scale + (x.shape[1] - 1) / 2)
    return out


def _bilinear(channel: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """`channel` sampled at fractional (rows, cols), edges clamped."""
    height, width = channel.shape
    rows = np.clip(np.broadcast_to(rows, (height, width)), 0, height - 1)
    cols = np.clip(np.broadcast_to(cols, (height, width)), 0, width - 1)
    r0, c0 = np.floor(rows).astype(int), np.floor(cols).astype(int)
    r1, c1 = np.minimum(r0 + 1, height - 1), np.minimum(c0 + 1, width - 1)
    fr, fc = rows - r0, cols - c0
    top = channel[r0, c0] * (1 - fc) + channel[r0, c1] * fc
    bottom = channel[r1, c0] * (1 - fc) + channel[r1, c1] * fc
    return top * (1 - fr) + bottom * fr


def _noise(x: np.ndarray, iso: int, seed: int) -> np.ndarray:
    gain = iso / 100.0
    sigma = np.sqrt(NOISE_GAIN * gain * x + (READ_NOISE * gain) ** 2)
    return np.clip(x + np.random.default_rng(seed).standard_normal(x.shape) * sigma, 0.0, None)


def _jpeg(image: np.ndarray, quality: int, subsampling: str) -> np.ndarray:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=quality, subsampling=subsampling)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return np.asarray(decoded.convert("RGB"), dtype=np.uint8).copy()


def clipped_share(image: np.ndarray) -> float:
    """The share of a uint8 frame's pixels with a channel at 255 (clipped)."""
    return float(np.mean((np.asarray(image) >= 255).any(axis=-1)))


def crushed_share(image: np.ndarray) -> float:
    """The share of a uint8 frame's pixels that are black in every channel (crushed)."""
    return float(np.mean((np.asarray(image) == 0).all(axis=-1)))

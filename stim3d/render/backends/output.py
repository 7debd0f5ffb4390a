"""The result of rendering one scene, shared by every backend (Blender, raster)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RenderOutput:
    """What a backend hands back for one item.

    - `image`: (H, W, 3) uint8, display sRGB (Blender's "Standard" view transform),
      row 0 = top of the image.
    - `instance_map`: (H, W) uint16 from the renderer's own object-index or
      segmentation pass (pixel = object id, 0 = background or ground); None when the
      engine has no such pass.
    - `depth`: (H, W) float32, metres along the camera axis, np.inf where nothing is
      hit; None unless depth was asked for (or the engine cannot give it).
    - `normals`: (H, W, 3) float32 unit normals in camera space, OpenCV axes (x right,
      y down, z forward: a surface facing the camera has z < 0), NaN where nothing is
      hit; None unless the normals pass was asked for (Cycles only).
    - `linear`: (H, W, 3) float32 scene-linear RGB (the Combined pass), for a look whose
      camera pipeline develops it into `image` (render/camera_pipeline.py); None otherwise.
    - `blender_version`: e.g. "5.0.1"; None for non-Blender backends.
    - `render_seconds`: wall time of the renderer's own render call only (not scene
      building, not reading the files back).
    """

    image: np.ndarray
    instance_map: np.ndarray | None
    depth: np.ndarray | None
    blender_version: str | None
    render_seconds: float
    normals: np.ndarray | None = None
    linear: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.image.ndim != 3 or self.image.shape[2] != 3 or self.image.dtype != np.uint8:
            raise ValueError(f"image must be (H, W, 3) uint8, got {self.image.shape} {self.image.dtype}")
        height, width = self.image.shape[:2]
        if self.instance_map is not None and (
            self.instance_map.shape != (height, width) or self.instance_map.dtype != np.uint16
        ):
            raise ValueError(
                f"instance_map must be ({height}, {width}) uint16, got {self.instance_map.shape} {self.instance_map.dtype}"
            )
        if self.depth is not None and (self.depth.shape != (height, width) or self.depth.dtype != np.float32):
            raise ValueError(f"depth must be ({height}, {width}) float32, got {self.depth.shape} {self.depth.dtype}")
        if self.normals is not None and (self.normals.shape != (height, width, 3) or self.normals.dtype != np.float32):
            raise ValueError(f"normals must be ({height}, {width}, 3) float32, got {self.normals.shape} {self.normals.dtype}")
        if self.linear is not None and (self.linear.shape != (height, width, 3) or self.linear.dtype != np.float32):
            raise ValueError(f"linear must be ({height}, {width}, 3) float32, got {self.linear.shape} {self.linear.dtype}")

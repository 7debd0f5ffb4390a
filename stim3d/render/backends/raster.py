"""Raster backend (pyrender over headless EGL): fast previews and an independent mask check, no Blender.

Same camera, same triangles as the ray caster and Blender:
- pyrender.IntrinsicsCamera(fx, fy, cx, cy) projects to u = cx + fx x / d and, after
  pyrender flips the read-back rows, v = cy - fy y / d with row 0 at the top: exactly
  the convention of scenes/camera.py, so cx, cy pass through unchanged;
- the camera pose is the camera-to-world matrix from `rotation_quat` and `location`
  (pyrender cameras look down local -Z with +Y up, as in Blender);
- meshes are `scenes.meshes.object_world_vertices` (unit mesh * size, rotated, placed), drawn
  as non-indexed triangles with per-face flat or smooth normals from `mesh.smooth`.

The instance map comes from a segmentation render (`RenderFlags.SEG`, multisampling off,
so each pixel is decided at its centre): object id encoded as (id & 255, id >> 8, 0) and
decoded back to uint16; the ground is drawn there as id 0 (like the background). Depth,
when asked, comes from that same pass: the colour pass is multisampled, and its resolved
depth at silhouette pixels belongs to an off-centre sample.

The colour image is a preview, not physically based: ambient light from the world colour
and strength, one directional light per area light (same orientation, intensity shared by
power), pyrender's metallic-roughness shading with metallic 0 and its display gamma.
Deterministic; `seed` is accepted for the common interface and unused.
The item's look (`scene.look`, scenes/looks.py) is ignored: a preview always shows the studio
look's lights, stage colours and palette colours (docs/looks.md says what each preview keeps).

pyrender is imported lazily (it sets up OpenGL on import), after
`os.environ.setdefault("PYOPENGL_PLATFORM", "egl")`. One OffscreenRenderer (an OpenGL
context) is kept per (width, height).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from stim3d.render.backends.output import RenderOutput
from stim3d.render.settings import RenderSettings
from stim3d.scenes.colors import linear_to_srgb, srgb_to_linear
from stim3d.scenes.meshes import mesh_key, object_mesh, object_world_vertices
from stim3d.scenes.model import Scene, SceneObject
from stim3d.scenes.primitives import PrimitiveMesh, quat_to_matrix

EGL_HINT = "install the system packages libegl1 and libegl-mesa0"
ZNEAR, ZFAR = 0.05, 1000.0
ROUGHNESS = {"matte": 0.5, "glossy": 0.15}
# Preview lighting: total directional intensity (shared by the area lights by power) and an
# ambient term of world colour * strength * AMBIENT_SCALE. Tuned so a grey cube reads near nominal.
DIRECTIONAL_TOTAL = 2.5
AMBIENT_SCALE = 0.6

_RENDERERS: dict[tuple[int, int], object] = {}


def _pyrender():
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    try:
        import pyrender
    except Exception as error:  # missing libEGL surfaces here as an ImportError or OSError
        raise RuntimeError(f"pyrender cannot be imported with EGL ({EGL_HINT}): {error}") from None
    return pyrender


def preload() -> None:
    """Load pyrender (and OpenGL) now, as blender.preload does for bpy, for a batch worker at start.

    Without EGL nothing is loaded and nothing is raised here: each item's render reports
    it then, in one line, as it would without a preload.
    """
    try:
        _pyrender()
    except RuntimeError:
        pass


def _renderer(pyrender, width: int, height: int):
    key = (width, height)
    if key not in _RENDERERS:
        try:
            _RENDERERS[key] = pyrender.OffscreenRenderer(width, height)
        except Exception as error:
            raise RuntimeError(
                f"pyrender could not create a headless EGL OpenGL context ({EGL_HINT}): "
                f"{type(error).__name__}: {error}".replace("\n", " ")
            ) from None
    return _RENDERERS[key]


def _unit_normals(obj: SceneObject) -> np.ndarray:
    """(M, 3, 3) unit-mesh normals per triangle corner: vertex normals on smooth faces, face normals elsewhere."""
    key = mesh_key(obj)
    if key not in _NORMALS:
        if len(_NORMALS) >= 16:
            _NORMALS.pop(next(iter(_NORMALS)))
        _NORMALS[key] = _normals_of(object_mesh(obj))
    return _NORMALS[key]


_NORMALS: dict[str, np.ndarray] = {}  # per geometry (scenes/meshes.py mesh_key); a batch uses a handful


def _normals_of(mesh: PrimitiveMesh) -> np.ndarray:
    corners = mesh.vertices[mesh.faces]
    face_normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])  # area-weighted
    vertex_normals = np.zeros_like(mesh.vertices)
    smooth = mesh.smooth
    np.add.at(vertex_normals, mesh.faces[smooth].ravel(), np.repeat(face_normals[smooth], 3, axis=0))
    vertex_normals /= np.maximum(np.linalg.norm(vertex_normals, axis=1, keepdims=True), 1e-12)
    flat = face_normals / np.maximum(np.linalg.norm(face_normals, axis=1, keepdims=True), 1e-12)
    normals = np.where(smooth[:, None, None], vertex_normals[mesh.faces], flat[:, None, :])
    normals.setflags(write=False)
    return normals


def _material(pyrender, srgb, roughness: float):
    return pyrender.MetallicRoughnessMaterial(
        baseColorFactor=(*(float(c) for c in srgb_to_linear(srgb)), 1.0),
        metallicFactor=0.0,
        roughnessFactor=roughness,
    )


def _primitive(pyrender, positions: np.ndarray, normals: np.ndarray, material):
    return pyrender.Primitive(
        positions=positions.reshape(-1, 3).astype(np.float32),
        normals=normals.reshape(-1, 3).astype(np.float32),
        material=material,
        mode=4,  # GL_TRIANGLES
    )


def _pose(quat, location) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = quat_to_matrix(quat)
    pose[:3, 3] = location
    return pose


def _build(pyrender, scene: Scene):
    stage = scene.stage
    ambient = srgb_to_linear(stage.world_srgb) * stage.world_strength * AMBIENT_SCALE
    sky = np.clip(linear_to_srgb(srgb_to_linear(stage.world_srgb) * stage.world_strength), 0, 1)  # as Cycles shows it
    pr_scene = pyrender.Scene(bg_color=(*sky, 1.0), ambient_light=ambient)
    half = stage.ground_size / 2.0
    ground = np.array([[[-half, -half, 0], [half, -half, 0], [half, half, 0]], [[-half, -half, 0], [half, half, 0], [-half, half, 0]]])
    ground_normals = np.broadcast_to([0.0, 0.0, 1.0], ground.shape)
    ground_node = pr_scene.add(
        pyrender.Mesh([_primitive(pyrender, ground, ground_normals, _material(pyrender, stage.ground_srgb, 0.8))]),
        name="ground",
    )
    seg_node_map = {ground_node: (0, 0, 0)}  # drawn as id 0, so the segmentation pass's depth includes it
    for obj in scene.objects:
        corners = object_world_vertices(obj)[object_mesh(obj).faces]
        normals = _unit_normals(obj) @ quat_to_matrix(obj.rotation_quat).T
        material = _material(pyrender, obj.color.srgb, ROUGHNESS[obj.finish])
        node = pr_scene.add(pyrender.Mesh([_primitive(pyrender, corners, normals, material)]), name=f"{obj.id:03d}_{obj.shape}_{obj.color.name}")
        seg_node_map[node] = (obj.id & 255, obj.id >> 8, 0)
    total_power = sum(light.power_w for light in scene.lights)
    for light in scene.lights:
        if total_power <= 0:
            break
        directional = pyrender.DirectionalLight(
            color=np.clip(srgb_to_linear(light.color_srgb), 0, 1),
            intensity=DIRECTIONAL_TOTAL * light.power_w / total_power,
        )
        pr_scene.add(directional, pose=_pose(light.rotation_quat, light.location))
    cam = scene.camera
    camera = pyrender.IntrinsicsCamera(cam.fx, cam.fy, cam.cx, cam.cy, znear=ZNEAR, zfar=ZFAR)
    pr_scene.add(camera, pose=_pose(cam.rotation_quat, cam.location))
    return pr_scene, seg_node_map


def render_scene(scene: Scene, settings: RenderSettings, seed: int, workdir: Path | None = None) -> RenderOutput:
    """Render `scene` with pyrender; see the module docstring. `workdir` is unused (nothing is written)."""
    if settings.engine != "raster":
        raise ValueError(f"render.raster renders engine 'raster', not {settings.engine!r}")
    cam = scene.camera
    if (settings.width, settings.height) != (cam.width, cam.height):
        raise ValueError(
            f"render size {settings.width}x{settings.height} differs from the camera's {cam.width}x{cam.height}"
        )
    pyrender = _pyrender()
    renderer = _renderer(pyrender, cam.width, cam.height)
    pr_scene, seg_node_map = _build(pyrender, scene)
    start = time.perf_counter()
    color, _ = renderer.render(pr_scene)
    # The segmentation render has multisampling off: its ids and depth are decided at pixel centres.
    seg, depth_raw = renderer.render(pr_scene, flags=pyrender.RenderFlags.SEG, seg_node_map=seg_node_map)
    seconds = time.perf_counter() - start
    seg = np.asarray(seg)
    instance_map = (seg[..., 0].astype(np.uint16) | (seg[..., 1].astype(np.uint16) << 8)).astype(np.uint16)
    depth = None
    if settings.depth:
        depth = np.asarray(depth_raw, dtype=np.float32).copy()
        depth[depth <= 0] = np.inf  # pyrender: 0 where nothing is drawn
    return RenderOutput(
        image=np.ascontiguousarray(np.asarray(color)[..., :3], dtype=np.uint8),
        instance_map=instance_map,
        depth=depth,
        blender_version=None,
        render_seconds=seconds,
    )

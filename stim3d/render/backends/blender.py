"""Blender backend: render settings, passes and the render call (Cycles or Workbench).

`render_scene(scene, settings, seed, workdir)` resets Blender to factory settings
(empty scene), builds the datablocks (render/backends/blender_scene.py), renders once and
returns a `RenderOutput`:

- the beauty image is saved from "Render Result" with `save_render` (colour
  managed: view transform "Standard", look "None", exposure 0, gamma 1, dither 0)
  as an 8-bit RGB PNG in `workdir` and read back with Pillow;
- the object-index pass (and the depth pass when `settings.depth`) goes through a
  compositor File Output node into a multilayer EXR in `workdir`. Blender 5.0 writes
  that file as a *multi-part* EXR, one part per File Output item, so each pass is
  looked up by channel name across all parts (the first part alone holds only the
  first item: that is why a second "Depth" item seemed to be missing); Blender 4.x
  writes one part with both layers. The Render Layers "Depth" socket exists only
  while the view layer's Z pass is on. With `settings.normals` (Cycles) the
  "Normal" pass (world-space shading normals of the same first hit) is written too,
  as a 3-channel layer, and turned into camera space (scenes/interchange.py). Under a
  look with a camera pipeline (photoreal) the Combined pass ("Image", denoised,
  scene-linear) is written too and returned as `RenderOutput.linear`, which
  render/camera_pipeline.py develops into the final image. Under a look with a
  lens (photoreal's depth of field) the data passes are rendered apart, through the
  pinhole (`_pinhole_passes`), so the mask, depth and normals are studio's.
  Both EXR and PNG rows come back top-to-bottom (row 0 = image top); tests check it
  with an asymmetric scene.

Blender versions: the batch runs bpy 5.0.1; the add-on's Render and Save runs this
same code in desktop Blender 4.2 and later. The compositor tree and the File Output
node changed API in 5.0, and 4.x calls the Render Layers object-index socket
"IndexOB": `_compositor_tree`, `_file_output` and `RENDER_LAYER_SOCKETS_4X` hide
the difference (testing for the 5.0 attribute, not a version number); the rest is
common. scripts/check_blender42.sh checks bpy 4.2.0.

Pixel filter: Cycles' default (Blackman-Harris, 1.5 px) is kept. Cycles writes its
data passes (object index, depth) from the first sample of each pixel only, and that
sample is aimed at the pixel centre whatever the filter, so the object-index pass
equals a first-hit ray cast through pixel centres up to the filter table's lookup
error (~1e-3 px). Measured on six random 320x240 scenes of 8 objects (460,800 px):
default filter 3 differing pixels, box 1.0 px and Gaussian 1.5 px 2, Blackman-Harris
0.01 px 0; every differing pixel had a silhouette within 1e-3 px of its centre. A
0.01 px filter would buy those last pixels by switching anti-aliasing off in the
beauty image, so the default stays; the agreement is recorded per item anyway.

Workbench (`settings.engine == "workbench"`): studio lighting, material colours;
in Blender 5.0 it offers no Object Index pass (only Combined and Depth), so its
`instance_map` is None. Its depth pass is returned when asked.

Blender's C-level prints go to `workdir/blender.log` (render/backends/blender_streams.py).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.files import log_tail
from stim3d.render.backends.blender_streams import EGL_NOISE, stderr_without, stdout_to
from stim3d.render.backends.output import RenderOutput
from stim3d.render.settings import RenderSettings
from stim3d.scenes.interchange import normals_to_camera
from stim3d.scenes.model import DrawnLook, Scene

ENGINES = {"cycles": "CYCLES", "workbench": "BLENDER_WORKBENCH"}
PASSES_NAME = "passes"
BEAUTY_NAME = "beauty"  # the linear Combined pass of a render with depth of field, apart from the pinhole's passes
IMAGE_NAME = "image.png"
LOG_NAME = "blender.log"
BACKGROUND_DEPTH = 1e9  # Cycles writes 1e10 where a ray hits nothing
# Blender 4.x names the Render Layers node's object-index socket "IndexOB" (5.0: "Object Index").
RENDER_LAYER_SOCKETS_4X = {"Object Index": "IndexOB"}
VECTOR_PASSES = {"Normal"}  # written and read back as three channels (X, Y, Z)
COLOUR_PASSES = {"Image"}  # written and read back as colour channels (R, G, B; the alpha is dropped)
GPU_KINDS = ("OPTIX", "CUDA")
GPU_ERROR = "GPU requested but no CUDA/OptiX device found"

def _enable_gpu(bpy) -> str:
    """Select the first CUDA/OptiX device kind that has devices; RuntimeError if none."""
    prefs = bpy.context.preferences.addons["cycles"].preferences
    for kind in GPU_KINDS:
        try:
            prefs.compute_device_type = kind
        except TypeError:  # kind not compiled in / not offered
            continue
        prefs.refresh_devices()
        devices = [device for device in prefs.devices if device.type == kind]
        if devices:
            for device in prefs.devices:
                device.use = device.type == kind
            return kind
    prefs.compute_device_type = "NONE"
    raise RuntimeError(GPU_ERROR)


def _colour_management(scene_bpy) -> None:
    scene_bpy.display_settings.display_device = "sRGB"
    view = scene_bpy.view_settings
    view.view_transform = "Standard"
    view.look = "None"
    view.exposure = 0.0
    view.gamma = 1.0
    view.use_curve_mapping = False
    scene_bpy.render.dither_intensity = 0.0  # no noise added on the float -> 8-bit step
    scene_bpy.render.film_transparent = False
    image = scene_bpy.render.image_settings
    if hasattr(image, "media_type"):  # Blender >= 5.0; 4.x has no media type
        image.media_type = "IMAGE"
    image.file_format = "PNG"
    image.color_mode = "RGB"
    image.color_depth = "8"
    image.compression = 0  # a scratch file read back at once (item_folder.py writes the final PNG): store, do not deflate


def _cycles(bpy, scene_bpy, settings: RenderSettings, seed: int) -> None:
    scene_bpy.render.engine = "CYCLES"
    cycles = scene_bpy.cycles
    if settings.device == "gpu":
        _enable_gpu(bpy)
        cycles.device = "GPU"
    else:
        cycles.device = "CPU"
    cycles.samples = settings.samples
    cycles.use_adaptive_sampling = settings.adaptive_sampling
    cycles.use_denoising = settings.denoise
    if settings.denoise:
        cycles.denoiser = "OPENIMAGEDENOISE"
        cycles.denoising_quality = settings.denoise_quality.upper()
        cycles.denoising_prefilter = "FAST" if settings.denoise_quality == "fast" else "ACCURATE"
    cycles.use_light_tree = settings.light_tree
    cycles.seed = seed % 2**31
    cycles.use_animated_seed = False
    render = scene_bpy.render
    if settings.threads == 0:
        render.threads_mode = "AUTO"
    else:
        render.threads_mode = "FIXED"
        render.threads = settings.threads


def _workbench(scene_bpy) -> None:
    scene_bpy.render.engine = "BLENDER_WORKBENCH"
    shading = scene_bpy.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_shadows = False
    shading.show_cavity = False
    scene_bpy.display.render_aa = "8"


def _compositor_tree(bpy, scene_bpy):
    """An empty compositor node tree that renders of `scene_bpy` run through.

    Blender 5.0 made the compositor a node group of its own (created in
    `bpy.data.node_groups` and assigned to `scene.compositing_node_group`);
    Blender 4.x (the add-on's desktop Blenders, 4.2 and later) keeps one tree per
    scene, switched on with `scene.use_nodes` and found at `scene.node_tree`,
    which starts with Render Layers -> Composite: cleared here so both versions
    start from the same empty tree.
    """
    scene_bpy.render.use_compositing = True
    if hasattr(scene_bpy, "compositing_node_group"):  # Blender >= 5.0
        tree = bpy.data.node_groups.new("stim3d", "CompositorNodeTree")
        scene_bpy.compositing_node_group = tree
        return tree
    scene_bpy.use_nodes = True  # Blender 4.x
    tree = scene_bpy.node_tree
    tree.nodes.clear()
    return tree


def _file_output(tree, workdir: Path, names: list[str], frame: int, file_name: str = PASSES_NAME) -> tuple[Any, Path]:
    """A File Output node writing `names` as float layers of one 32-bit multilayer EXR; returns (node, its path).

    Blender 5.0: `directory` + `file_name` name the file (`passes.exr`),
    `format.media_type` must be set before `file_format`, and the inputs are
    `file_output_items`. Blender 4.x: `base_path` is a path prefix to which the
    frame number is appended (`passes0001.exr`), there is no media type, and a
    multilayer file's inputs are `layer_slots`.
    """
    out = tree.nodes.new("CompositorNodeOutputFile")
    if hasattr(out, "file_output_items"):  # Blender >= 5.0
        out.directory = str(workdir)
        out.file_name = file_name
        out.format.media_type = "MULTI_LAYER_IMAGE"  # before file_format
        _float_exr(out.format)
        for name in names:
            kind = "VECTOR" if name in VECTOR_PASSES else "RGBA" if name in COLOUR_PASSES else "FLOAT"
            out.file_output_items.new(kind, name)
        return out, workdir / f"{file_name}.exr"
    out.base_path = str(workdir / file_name)  # Blender 4.x
    _float_exr(out.format)
    out.layer_slots.clear()
    for name in names:
        out.layer_slots.new(name)
    return out, workdir / f"{file_name}{frame:04d}.exr"


def _float_exr(image_format) -> None:
    image_format.file_format = "OPEN_EXR_MULTILAYER"
    image_format.color_depth = "32"
    image_format.exr_codec = "NONE"  # scratch, read back at once: uncompressed is fastest both ways


def _pass_tree(bpy, scene_bpy, workdir: Path, object_index: bool, depth: bool,
               normals: bool = False, linear: bool = False, file_name: str = PASSES_NAME) -> tuple[list[str], Path | None]:
    """Compositor: Render Layers -> File Output (multilayer EXR, 32-bit float). Returns the pass names and the EXR path."""
    layer = scene_bpy.view_layers[0]
    layer.use_pass_object_index = object_index
    layer.use_pass_z = depth
    layer.use_pass_normal = normals
    names = (["Object Index"] if object_index else []) + (["Depth"] if depth else []) + (["Normal"] if normals else []) \
        + (["Image"] if linear else [])
    if not names:
        return names, None
    tree = _compositor_tree(bpy, scene_bpy)
    layers = tree.nodes.new("CompositorNodeRLayers")
    layers.scene = scene_bpy
    out, path = _file_output(tree, workdir, names, scene_bpy.frame_current, file_name)
    for name in names:
        socket = layers.outputs.get(name) or layers.outputs[RENDER_LAYER_SOCKETS_4X[name]]
        tree.links.new(socket, out.inputs[name])
    return names, path


def _read_passes(path: Path, names: list[str], shape: tuple[int, int]) -> dict[str, np.ndarray]:
    import OpenEXR

    channels: dict[str, dict[str, np.ndarray]] = {}
    with OpenEXR.File(str(path), separate_channels=True) as exr:
        for part in exr.parts:  # Blender 5.0: one part per File Output item
            for channel, data in part.channels.items():
                layer, _, component = channel.rpartition(".")
                if layer in names:
                    channels.setdefault(layer, {}).setdefault(component, np.array(data.pixels, dtype=np.float32))
    found: dict[str, np.ndarray] = {}
    for layer, parts in channels.items():
        if layer in VECTOR_PASSES:  # (H, W, 3) from the X, Y, Z channels
            if set(parts) >= {"X", "Y", "Z"}:
                found[layer] = np.stack([parts["X"], parts["Y"], parts["Z"]], axis=-1)
        elif layer in COLOUR_PASSES:  # (H, W, 3) from the R, G, B channels
            if set(parts) >= {"R", "G", "B"}:
                found[layer] = np.stack([parts["R"], parts["G"], parts["B"]], axis=-1)
        else:
            found[layer] = next(iter(parts.values()))
    missing = [name for name in names if name not in found]
    if missing:
        raise RuntimeError(f"Blender pass file {path} lacks {missing}; it has {sorted(found)}")
    for name, array in found.items():
        if array.shape[:2] != shape:
            raise RuntimeError(f"pass {name!r} in {path} is {array.shape}, expected {shape}")
    return found


def _pinhole_passes(bpy, scene_bpy, workdir: Path, depth: bool, normals: bool) -> tuple[list[str], Path | None]:
    """Render the scene once more through the pinhole (depth of field off, one sample, no denoiser) for its data
    passes: the object index (the mask), depth and normals are then exactly what studio's render gives, since a
    data pass comes from a pixel's first sample, aimed at its centre (module docstring). About a second's work
    next to the beauty render's samples."""
    scene_bpy.camera.data.dof.use_dof = False
    scene_bpy.cycles.samples = 1
    scene_bpy.cycles.use_denoising = False
    names, path = _pass_tree(bpy, scene_bpy, workdir, object_index=True, depth=depth, normals=normals)
    bpy.ops.render.render()
    return names, path


def preload() -> None:
    """Load bpy and every module a render loads, including what Blender's first factory reset pulls in.

    A batch worker calls this at start (render/batch/executors/jobs.py import_backend), before it
    composes on a second thread: an extension module first loaded while the other thread runs Embree
    or Cycles can hang the worker in the dynamic loader. bpy is imported lazily everywhere else so
    that importing stim3d stays light; the reset loads Blender's extensions add-on (urllib, ssl).
    """
    import bpy
    import OpenEXR  # noqa: F401
    from PIL import Image  # noqa: F401

    from stim3d.render.backends import blender_scene  # noqa: F401

    with stdout_to(Path(os.devnull)):
        bpy.ops.wm.read_factory_settings(use_empty=True)


def render_scene(scene: Scene, settings: RenderSettings, seed: int, workdir: Path) -> RenderOutput:
    """Render `scene` with Blender (Cycles or Workbench) into `workdir`; see the module docstring."""
    if settings.engine not in ENGINES:
        raise ValueError(f"render.blender cannot render engine {settings.engine!r}; allowed: {', '.join(ENGINES)}")
    camera = scene.camera
    if (settings.width, settings.height) != (camera.width, camera.height):
        raise ValueError(
            f"render size {settings.width}x{settings.height} differs from the camera's {camera.width}x{camera.height}"
        )
    import bpy
    from PIL import Image

    from stim3d.render.backends import blender_scene

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    image_path = workdir / IMAGE_NAME
    log_path = workdir / LOG_NAME
    for stale in [image_path, *workdir.glob(f"{PASSES_NAME}*.exr"), *workdir.glob(f"{BEAUTY_NAME}*.exr")]:
        stale.unlink(missing_ok=True)
    cycles = settings.engine == "cycles"
    want_depth = settings.depth

    with stdout_to(log_path), stderr_without(EGL_NOISE, workdir / "blender.stderr.log", active=not cycles):
        try:
            bpy.ops.wm.read_factory_settings(use_empty=True)
            scene_bpy = bpy.context.scene
            blender_scene.build(scene_bpy, scene)
            _colour_management(scene_bpy)
            if cycles:
                _cycles(bpy, scene_bpy, settings, seed)
                if isinstance(scene.look, DrawnLook):
                    blender_scene.blender_looks.set_cycles(scene_bpy.cycles)
            else:
                _workbench(scene_bpy)
            look = scene.look
            developed = cycles and isinstance(look, DrawnLook) and look.pipeline is not None
            focused = cycles and isinstance(look, DrawnLook) and look.lens is not None
            # with depth of field the beauty render's first sample leaves the pinhole, so its data passes would not
            # be the pinhole's: they come from a second, one-sample render without it (_pinhole_passes)
            names, passes_path = _pass_tree(bpy, scene_bpy, workdir, object_index=cycles and not focused,
                                            depth=want_depth and not focused, normals=cycles and settings.normals
                                            and not focused, linear=developed, file_name=BEAUTY_NAME if focused
                                            else PASSES_NAME)
            start = time.perf_counter()
            bpy.ops.render.render()
            seconds = time.perf_counter() - start
            bpy.data.images["Render Result"].save_render(str(image_path), scene=scene_bpy)
            if focused:
                beauty_names, beauty_path = names, passes_path
                names, passes_path = _pinhole_passes(bpy, scene_bpy, workdir, want_depth, settings.normals)
        except RuntimeError as error:
            if str(error) == GPU_ERROR:
                raise
            tail = "\n".join(log_tail(log_path, 20, lambda line: not line.startswith("Fra:")))  # not the progress lines
            raise RuntimeError(f"Blender render failed: {error}\n{tail}") from error

    with Image.open(image_path) as png:
        image = np.asarray(png.convert("RGB"), dtype=np.uint8).copy()
    shape = (camera.height, camera.width)
    if image.shape[:2] != shape:
        raise RuntimeError(f"Blender wrote a {image.shape[1]}x{image.shape[0]} image, expected {shape[1]}x{shape[0]}")
    passes = _read_passes(passes_path, names, shape) if passes_path else {}
    if focused and beauty_path is not None:
        passes.update(_read_passes(beauty_path, beauty_names, shape))
    instance_map = None
    if "Object Index" in passes:
        instance_map = np.rint(passes["Object Index"]).astype(np.uint16)
    depth = None
    if "Depth" in passes:
        depth = passes["Depth"].astype(np.float32)
        depth[~(depth < BACKGROUND_DEPTH)] = np.inf
    normals = normals_to_camera(passes["Normal"], camera) if "Normal" in passes else None
    return RenderOutput(
        image=image,
        instance_map=instance_map,
        depth=depth,
        blender_version=bpy.app.version_string,
        render_seconds=seconds,
        normals=normals,
        linear=passes["Image"].astype(np.float32) if "Image" in passes else None,
    )

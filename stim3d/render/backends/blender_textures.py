"""A sign's face (scenes/surfaces.py) -> a Blender material: a texture class as shader nodes, or a text.

render/backends/blender_scene.py asks `surface_material` first for every object; an
object whose attributes name a `texture` gets a Principled BSDF whose base colour
mixes the paper and the ink by an ink mask built here; every other object gets
None and keeps its studio or look material.

The mask is the class's definition in scenes/surfaces.py (`texture_ink`), written
as Math nodes on the tile's object coordinates (metres on its face): the face's x
and y, turned by the pattern's angle and divided by its period, give (u, v) in
periods; FRACT, FLOOR and comparisons make stripes, checks, dots, grid lines and
zigzags. `cracked` is Blender's Voronoi texture (distance to the cell edge) on (u, v),
the one class whose pattern is Blender's own hash. The mask is 0 or 1 per shading
point (no smooth step), so a pixel's colour is the paper, the ink, or their mix where
an edge crosses it. The ink never changes the object's pass index: masks and the
ground truth are the same as for a plain tile.

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

import math
from typing import Any

import bpy
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from stim3d.render.backends.blender_nodes import rgba, socket
from stim3d.scenes import surfaces
from stim3d.scenes.fonts import FONT_PATH
from stim3d.scenes.model import SceneObject

TEXT_RESOLUTION = 1024  # pixels across the face's text image: a 12 cm cap on a 1.5 m sign is 80 px high
ROUGHNESS = 0.6  # paper-like; matte enough that the pattern is not washed out by a highlight


class MathGraph:
    """Terse Math-node arithmetic in one node tree: each call returns the output socket."""

    def __init__(self, tree):
        self.tree = tree

    def op(self, operation: str, a: Any, b: Any = None) -> Any:
        node = self.tree.nodes.new("ShaderNodeMath")
        node.operation = operation
        for target, value in zip(node.inputs, (a, b)):
            if value is None:
                continue
            if isinstance(value, (int, float)):
                target.default_value = float(value)
            else:
                self.tree.links.new(value, target)
        return node.outputs[0]

    def fract(self, a: Any) -> Any:
        return self.op("FRACT", a)

    def less(self, a: Any, b: Any) -> Any:
        return self.op("LESS_THAN", a, b)


def _face_uv(graph: MathGraph, period: float, angle_deg: float) -> tuple[Any, Any]:
    """(u, v) in periods from the tile's object coordinates, as scenes/surfaces.py `face_uv`."""
    coords = graph.tree.nodes.new("ShaderNodeTexCoord")
    xyz = graph.tree.nodes.new("ShaderNodeSeparateXYZ")
    graph.tree.links.new(coords.outputs["Object"], xyz.inputs[0])
    x, y = xyz.outputs["X"], xyz.outputs["Y"]
    a = math.radians(angle_deg)
    c, s = math.cos(a) / period, math.sin(a) / period
    u = graph.op("ADD", graph.op("MULTIPLY", x, c), graph.op("MULTIPLY", y, s))
    v = graph.op("SUBTRACT", graph.op("MULTIPLY", y, c), graph.op("MULTIPLY", x, s))
    return u, v


def _voronoi_edges(graph: MathGraph, u: Any, v: Any) -> Any:
    """Cracks: within CRACK_WIDTH periods of a Voronoi cell edge, cells one period across."""
    combine = graph.tree.nodes.new("ShaderNodeCombineXYZ")
    graph.tree.links.new(u, combine.inputs["X"])
    graph.tree.links.new(v, combine.inputs["Y"])
    voronoi = graph.tree.nodes.new("ShaderNodeTexVoronoi")
    voronoi.voronoi_dimensions = "2D"
    voronoi.feature = "DISTANCE_TO_EDGE"
    voronoi.inputs["Scale"].default_value = 1.0
    voronoi.inputs["Randomness"].default_value = 1.0
    graph.tree.links.new(combine.outputs["Vector"], voronoi.inputs["Vector"])
    return graph.less(voronoi.outputs["Distance"], surfaces.CRACK_WIDTH)


def texture_mask(graph: MathGraph, name: str, u: Any, v: Any) -> Any:
    """The class's ink mask (1 = ink) as Math nodes; the same arithmetic as `surfaces.texture_ink`."""
    g = graph
    if name == "striped":
        return g.less(g.fract(u), 0.5)
    if name == "chequered":
        total = g.op("ADD", g.op("FLOOR", u), g.op("FLOOR", v))
        half = g.op("MULTIPLY", total, 0.5)
        return g.op("GREATER_THAN", g.fract(half), 0.25)  # an odd sum leaves 0.5
    if name == "polka-dotted":
        du, dv = g.op("SUBTRACT", g.fract(u), 0.5), g.op("SUBTRACT", g.fract(v), 0.5)
        radius = g.op("SQRT", g.op("ADD", g.op("MULTIPLY", du, du), g.op("MULTIPLY", dv, dv)))
        return g.less(radius, surfaces.DOT_RADIUS)
    if name == "grid":
        return g.op("MAXIMUM", g.less(g.fract(u), surfaces.LINE_WIDTH), g.less(g.fract(v), surfaces.LINE_WIDTH))
    if name == "zigzagged":
        tri = g.op("ABSOLUTE", g.op("SUBTRACT", g.op("MULTIPLY", g.fract(u), 2.0), 1.0))
        return g.less(g.fract(g.op("ADD", v, g.op("MULTIPLY", tri, surfaces.ZIGZAG_AMPLITUDE))), 0.5)
    if name == "cracked":
        return _voronoi_edges(g, u, v)
    raise ValueError(f"unknown texture {name!r}; known: {', '.join(surfaces.TEXTURE_CLASSES)}")


def _paper_and_ink(obj: SceneObject, contrast: float, mask: Any, tree) -> Any:
    """A Principled BSDF whose base colour is the paper where `mask` is 0 and the ink where it is 1."""
    mix = tree.nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    tree.links.new(mask, socket(mix.inputs, "Factor_Float"))
    socket(mix.inputs, "A_Color").default_value = rgba(surfaces.PAPER_SRGB)
    socket(mix.inputs, "B_Color").default_value = rgba(surfaces.ink_srgb(obj.color.srgb, contrast))
    bsdf = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled")
    tree.links.new(socket(mix.outputs, "Result_Color"), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ROUGHNESS
    return bsdf


def _new_material(name: str):
    material = bpy.data.materials.new(name)
    if material.node_tree is None:  # Blender 4.x: nodes are opt-in
        material.use_nodes = True
    material.diffuse_color = rgba(surfaces.PAPER_SRGB)  # Workbench shows the paper
    return material


def text_mask_pixels(text: str, height_m: float, size_m: float, resolution: int = TEXT_RESOLUTION) -> np.ndarray:
    """The face as a (resolution, resolution) float mask, 1 = ink, row 0 at the face's top (as Pillow draws).

    The line is set in the shipped font at the cap height `height_m`, its left edge and
    baseline where scenes/surfaces.py `text_boxes` puts them, so the ink stays inside
    each character's box.
    """
    px_per_m = resolution / size_m
    _, cap, _, _ = surfaces.font_metrics()
    font = ImageFont.truetype(str(FONT_PATH), max(1, round(height_m / cap * px_per_m)))
    boxes = surfaces.text_boxes(text, height_m)
    image = Image.new("L", (resolution, resolution), 0)
    draw = ImageDraw.Draw(image)
    for char, box in zip(text, boxes):  # one glyph per advance cell: monospaced, placed exactly
        origin = ((box[0] + size_m / 2) * px_per_m, (size_m / 2 + height_m / 2) * px_per_m)
        draw.text(origin, char, fill=255, font=font, anchor="ls")
    return np.asarray(image, dtype=np.float32) / 255.0


def _text_mask(graph: MathGraph, obj: SceneObject) -> Any:
    """An image texture of the text on the face's (x, y) mapped to the unit square; its value is the ink."""
    tree, size = graph.tree, float(obj.size)
    mask = text_mask_pixels(str(obj.attributes["text"]), float(obj.attributes["text_height_m"]), size)
    image = bpy.data.images.new(f"text_{obj.id:03d}", mask.shape[1], mask.shape[0], alpha=False, float_buffer=True)
    image.colorspace_settings.name = "Non-Color"
    pixels = np.repeat(mask[::-1, :, None], 4, axis=2)  # Blender's row 0 is the bottom
    pixels[..., 3] = 1.0
    image.pixels.foreach_set(np.ascontiguousarray(pixels, dtype=np.float32).ravel())
    image.pack()
    coords = tree.nodes.new("ShaderNodeTexCoord")
    xyz = tree.nodes.new("ShaderNodeSeparateXYZ")
    tree.links.new(coords.outputs["Object"], xyz.inputs[0])
    uv = tree.nodes.new("ShaderNodeCombineXYZ")
    tree.links.new(graph.op("ADD", graph.op("DIVIDE", xyz.outputs["X"], size), 0.5), uv.inputs["X"])
    tree.links.new(graph.op("ADD", graph.op("DIVIDE", xyz.outputs["Y"], size), 0.5), uv.inputs["Y"])
    texture = tree.nodes.new("ShaderNodeTexImage")
    texture.image, texture.extension, texture.interpolation = image, "CLIP", "Linear"
    tree.links.new(uv.outputs["Vector"], texture.inputs["Vector"])
    return texture.outputs["Color"]


def surface_material(name: str, obj: SceneObject):
    """The sign's material when `obj` carries a texture or a text; None for any other object."""
    attributes = obj.attributes
    if not surfaces.carries_print(attributes):
        return None
    if "text" in attributes:
        material = _new_material(name)
        mask = _text_mask(MathGraph(material.node_tree), obj)
        _paper_and_ink(obj, float(attributes["text_contrast"]), mask, material.node_tree)
        return material
    material = _new_material(name)
    graph = MathGraph(material.node_tree)
    u, v = _face_uv(graph, float(attributes["texture_period_m"]), float(attributes["texture_angle_deg"]))
    mask = texture_mask(graph, str(attributes["texture"]), u, v)
    _paper_and_ink(obj, float(attributes["texture_contrast"]), mask, material.node_tree)
    return material

"""Shader-node building blocks shared by the look's grounds and object materials.

render/backends/blender_grounds.py (ground patterns) and render/backends/blender_looks.py
(object materials) build their node trees through `Nodes`: `add(kind, **inputs)`,
`link`, colour `mix`, `coords` (object coordinates in texture units per metre),
`math` and `map_range`. Keeping one helper means one place that knows Blender 5.0's
socket identifiers (ShaderNodeMix has several inputs named "A").

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

from typing import Any

import bpy

from stim3d.scenes.colors import srgb_to_linear


def rgba(srgb) -> tuple[float, float, float, float]:
    """An sRGB triple as Blender's linear RGBA."""
    r, g, b = (float(c) for c in srgb_to_linear(srgb))
    return (r, g, b, 1.0)


def scaled(colour: tuple[float, ...], factor: float) -> tuple[float, float, float, float]:
    """A linear RGBA colour times `factor` (clipped to 1), alpha kept at 1."""
    r, g, b = (min(1.0, c * factor) for c in colour[:3])
    return (r, g, b, 1.0)


def socket(sockets, identifier: str):
    """A node socket by identifier (ShaderNodeMix has several sockets named "A")."""
    return next(s for s in sockets if s.identifier == identifier)


class Nodes:
    """A node tree with terse helpers: `add(kind, **inputs)` and `link(output, input)`."""

    def __init__(self, tree):
        self.tree = tree

    def add(self, kind: str, **inputs: Any):
        node = self.tree.nodes.new(kind)
        for name, value in inputs.items():
            node.inputs[name.replace("_", " ")].default_value = value
        return node

    def link(self, output, to_input) -> None:
        self.tree.links.new(output, to_input)

    def _set(self, target, value) -> None:
        """A constant into a socket, or a link from an output socket."""
        if isinstance(value, (tuple, float, int)):
            target.default_value = value
        else:
            self.link(value, target)

    def mix(self, factor, a, b, blend: str = "MIX"):
        """Colour mix of a and b (a socket or an RGBA tuple each); returns the result socket."""
        node = self.tree.nodes.new("ShaderNodeMix")
        node.data_type = "RGBA"
        node.blend_type = blend
        for identifier, value in (("Factor_Float", factor), ("A_Color", a), ("B_Color", b)):
            self._set(socket(node.inputs, identifier), value)
        return socket(node.outputs, "Result_Color")

    def math(self, operation: str, a, b=None):
        """A Math node (a and b: sockets or numbers); returns its output socket."""
        node = self.tree.nodes.new("ShaderNodeMath")
        node.operation = operation
        for target, value in zip(node.inputs, (a, b)):
            if value is not None:
                self._set(target, float(value) if isinstance(value, (int, float)) else value)
        return node.outputs[0]

    def map_range(self, value, from_range: tuple[float, float], to_range: tuple[float, float],
                  smooth: bool = False):
        """`value` mapped linearly (or by smoothstep) from one range to another, clamped; the result socket."""
        node = self.add("ShaderNodeMapRange", From_Min=from_range[0], From_Max=from_range[1], To_Min=to_range[0],
                        To_Max=to_range[1])
        if smooth:
            node.interpolation_type = "SMOOTHSTEP"
        self._set(node.inputs["Value"], value)
        return node.outputs["Result"]

    def coords(self, scale_m: float, stretch=(1.0, 1.0, 1.0), offset=(0.0, 0.0, 0.0)):
        """Object coordinates divided by `scale_m` (texture units per metre), stretched per axis, then shifted."""
        coord = self.add("ShaderNodeTexCoord")
        mapping = self.add("ShaderNodeMapping")
        mapping.inputs["Scale"].default_value = tuple(s / scale_m for s in stretch)
        mapping.inputs["Location"].default_value = offset
        self.link(coord.outputs["Object"], mapping.inputs["Vector"])
        return mapping.outputs["Vector"]

    def noise(self, vector, seed: float, scale: float = 1.0, detail: float = 2.0, roughness: float = 0.5):
        """A 4D Noise texture (W = `seed` picks the pattern; the socket exists only in 4D); its node."""
        node = self.add("ShaderNodeTexNoise", Scale=scale, Detail=detail, Roughness=roughness)
        node.noise_dimensions = "4D"
        node.inputs["W"].default_value = seed
        self.link(vector, node.inputs["Vector"])
        return node


def new_world(name: str):
    """A node world: (world, Nodes, its Background node); Blender 4.x switches nodes on first."""
    world = bpy.data.worlds.new(name)
    if world.node_tree is None:  # Blender 4.x
        world.use_nodes = True
    background = next(node for node in world.node_tree.nodes if node.bl_idname == "ShaderNodeBackground")
    return world, Nodes(world.node_tree), background


def finish_world(scene_bpy, world, nodes: Nodes, background, colour, white_balance, strength: float,
                 map_resolution: int):
    """`world` lit by `colour` times `white_balance` (None: as it is) at `strength`, with a manual importance map at
    `map_resolution` (Blender's automatic one is slow here: render/backends/blender_looks.py says why), set as the
    scene's world."""
    if white_balance is not None:
        colour = nodes.mix(1.0, colour, (*white_balance, 1.0), "MULTIPLY")
    nodes.link(colour, background.inputs["Color"])
    background.inputs["Strength"].default_value = strength
    world.cycles.sampling_method = "MANUAL"
    world.cycles.sample_map_resolution = map_resolution
    scene_bpy.world = world
    return world


def new_material(name: str):
    """A node material: (material, Nodes, its Principled BSDF, its output node)."""
    material = bpy.data.materials.new(name)
    if material.node_tree is None:  # Blender 4.x
        material.use_nodes = True
    tree = material.node_tree
    bsdf = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled")
    output = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeOutputMaterial")
    return material, Nodes(tree), bsdf, output

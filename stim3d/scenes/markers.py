"""What a marker is: the box drawn around an object a question points at, stored on the object.

A family that marks objects (the AVA-3D families, scenes/families/ava/ava_common.py)
stores each marker on the object's `attributes`: `marker` (colour name),
`marker_x0`, `marker_y0`, `marker_x1`, `marker_y1` (the outer rectangle in pixels,
x1 and y1 exclusive) and `marker_px` (line width). The renderer draws exactly that
after rendering (render/markers.py). Both sides read this module, so render/ needs
no family module to draw or to move a marker.
"""

from __future__ import annotations

from typing import Protocol

from .model import SceneObject

MARKER_RGB: dict[str, tuple[int, int, int]] = {"red": (255, 0, 0), "blue": (0, 0, 255), "white": (255, 255, 255)}
Box = tuple[int, int, int, int]


class ImageSize(Protocol):
    """An image's size: a family's `Frame` or a scene's `Camera`."""

    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...


def marker_geometry(frame: ImageSize) -> tuple[int, int]:
    """(padding, line width) in pixels of a marker box for this image size."""
    largest = max(frame.width, frame.height)
    return max(2, round(largest / 100)), max(1, round(largest / 240))


def marker_box(box: Box, frame: ImageSize) -> Box:
    """The object's visible box grown by the marker padding and the line width, clipped to the image."""
    pad, width = marker_geometry(frame)
    grow = pad + width
    x0, y0, x1, y1 = box
    return (max(0, x0 - grow), max(0, y0 - grow), min(frame.width, x1 + grow), min(frame.height, y1 + grow))


def with_marker(obj: SceneObject, color: str, box: Box, frame: ImageSize) -> SceneObject:
    """`obj` labelled with the marker drawn around it: colour, outer rectangle (x1, y1 exclusive), line width."""
    x0, y0, x1, y1 = marker_box(box, frame)
    _, width = marker_geometry(frame)
    marker = {"marker": color, "marker_x0": x0, "marker_y0": y0, "marker_x1": x1, "marker_y1": y1, "marker_px": width}
    return obj.model_copy(update={"attributes": {**obj.attributes, **marker}})

"""Fonts that ship with stim3d (package data), each with its licence file next to it.

DejaVuSansMono-Bold.ttf: DejaVu fonts 2.37 as Debian's fonts-dejavu-core ships them;
Bitstream Vera licence (DejaVu's changes public domain), in LICENSE-DejaVu.txt: free
to use, copy and redistribute, renamed if modified. A monospaced bold face: every
character has the same advance, so a text's character boxes on a sign follow from
its length alone (scenes/surfaces.py), and bold strokes stay resolvable a few pixels high.
"""

from __future__ import annotations

from pathlib import Path

FONT_PATH = Path(__file__).with_name("DejaVuSansMono-Bold.ttf")
LICENSE_PATH = Path(__file__).with_name("LICENSE-DejaVu.txt")

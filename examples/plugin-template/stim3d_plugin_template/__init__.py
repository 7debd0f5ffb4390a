"""A template stim3d family plug-in (see family.py and stim3d's docs/plugins.md)."""

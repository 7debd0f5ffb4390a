"""The version of stim3d, recorded in every item's and record's provenance."""

__version__ = "0.2.0.dev0"

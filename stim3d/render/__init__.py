"""Turning items into files: backends, batch driver, item folders, records, CLI."""

__version__ = "0.1.0"

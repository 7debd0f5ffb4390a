"""Turning items into files: backends, batch driver and folder, item folders, records, views, exports, sweeps."""

"""ROSE-3D: majority grids with exceptions and five coupled tasks, their regions and size contrast."""

"""DYSM 3D ("Do You See Me"): shape and shape-colour counting, letters, spatial grids, form constancy."""

"""OddGrid-3D (OddGridBench): the one primitive in a grid that differs, with its attributes, layout, labels and measures."""

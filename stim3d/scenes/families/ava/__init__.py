"""AVA-3D (AVA-Bench): one atomic visual ability per family, and the scattering and markers they share."""

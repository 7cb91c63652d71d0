DATA = "data"
AFFINE = "affine"
INTENSITY = "intensity"

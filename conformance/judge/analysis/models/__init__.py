"""The defect models, one module per family of bug; ``kit`` holds what they are built with."""

from . import element_types, geometry, indices, layouts, opencv_indices_path, unpool, values

# the families in the order the search tries their models (catalogue.py)
FAMILY_MODULES = (geometry, values, indices, element_types, unpool, layouts, opencv_indices_path)

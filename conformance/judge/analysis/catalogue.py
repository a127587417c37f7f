"""The catalogue of defect models, assembled from one module per family (as onnx's reference ops
are assembled in ``_op_list.py``), in the order the search tries them: a model's place decides
which of two that reproduce an item is named first, and which pairs come within the limit (when
two of OpenCV's models moved up among the others, a round trip of three bugs went undiagnosed:
tests/meta/test_diagnosis.py)."""

from __future__ import annotations

from . import models
from .models.kit import DefectModel

FAMILIES = {"finite_value_for_minus_inf": "a finite seed or padding value stands in for -inf (the lowest value, a sentinel)",
            "indices_tensor_transposed": "storage_order 1 transposes the Indices tensor instead of counting positions column-major",
            "nan_lost_by_comparison": "NaN loses comparisons: a maximum taken as m = (m < v) ? v : m passes it over "
                                      "unless it leads a folded window, and an index sought by equality never finds it"}

DEFECTS: list[DefectModel] = [model for family in models.FAMILY_MODULES for model in family.MODELS]
BY_NAME = {d.name: d for d in DEFECTS}


def family_of(name: str) -> str | None:
    """The family of a diagnosis's name: a single model's (not one under a reading, nor a pair)."""
    model = BY_NAME.get(name)
    return model.family if model is not None else None

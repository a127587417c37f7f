"""A wrong element type factored out of a failure: an output answered in another type whose values
survive the cast to the documents' type (float16 pooled and returned in float32, Indices as int32,
a float64 answer through float32 where the values are float32's) is a cause of its own. The values
are then judged as if the type were right, so that an item with a second bug carries both causes,
and an item whose values are right carries the type alone (never "values differ").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..compare import same_bits

# A retyping the defect catalogue names as a model of its own (judge/analysis/catalogue.py): the same bug,
# reported under the same name whether diagnosis or this factoring finds it.
# Keyed by the output's kind: MaxPool's Y and a round trip's MaxUnpool output are both values.
CATALOGUED = {("values", "float16", "float32"): "float16_computed_as_float32", ("Indices", "int64", "int32"): "indices_int32",
              ("Indices", "int32", "int64"): "openvino_index_type_ignored"}  # only OpenVINO's may be int32
PREFIX = "answered_as:"  # a retyping the catalogue does not name: answered_as:Output:wanted:got


@dataclass(frozen=True)
class Retyped:
    """One output answered in another element type, its values intact."""

    output: str
    wanted: str
    got: str

    @property
    def name(self) -> str:
        kind = "Indices" if self.output == "Indices" else "values"
        return CATALOGUED.get((kind, self.wanted, self.got), f"{PREFIX}{self.output}:{self.wanted}:{self.got}")


def title(name: str) -> str | None:
    """The report's words for a retyping this module names (None for any other name)."""
    if not name.startswith(PREFIX):
        return None
    output, wanted, got = name.removeprefix(PREFIX).split(":", 2)
    return f"{wanted} {output} is answered as {got} (its values are {wanted}'s)"


def factored(names: Sequence[str], wanted: Sequence[np.ndarray], actual: Sequence[Any]) -> tuple[list[Any], list[Retyped]]:
    """``actual`` with each output of another element type cast to the wanted one, where every
    value survives the cast and comes back as it was (NaN as NaN, -0.0 as -0.0), and the
    retypings so undone. An output whose values would not survive is left as it is: its type
    and its values are then one difference, as before."""
    cast, found = list(actual), []
    for i, (name, want, got) in enumerate(zip(names, wanted, actual)):
        if not isinstance(got, np.ndarray) or got.dtype == want.dtype:
            continue
        if got.dtype.kind not in "fiu" and got.dtype.name != "bfloat16":
            continue  # a bool or an object array: not a numeric retyping
        try:
            with np.errstate(all="ignore"):
                undone = got.astype(want.dtype)
                back = undone.astype(got.dtype)
        except (TypeError, ValueError, OverflowError):
            continue
        if same_bits(back, got).all():  # nothing the judge compares was lost
            cast[i] = undone
            found.append(Retyped(name, str(want.dtype), str(got.dtype)))
    return cast, found

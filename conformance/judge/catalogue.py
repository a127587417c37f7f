"""The catalogue entries a run names, as its results.json carries them once (``catalogue``): for
each model its diagnoses name, what the report reads of the analysis (its title, its family, whether
it is two bugs in one kernel, whether it pools in another type) and its place in the catalogue's
order. The report and the fuzz read these, never the analysis: a run is shown with its own words,
and an old results.json with the titles of its day.
"""

from __future__ import annotations

from typing import Any, Iterable

from .analysis import fitted, retyping
from .analysis.catalogue import BY_NAME, DEFECTS, FAMILIES
from .diagnoses import Model

ORDER = {d.name: i for i, d in enumerate(DEFECTS)}


def entry(model: Model) -> dict[str, Any]:
    """One model's catalogue entry (a retyping or a fitted model has a title and no family)."""
    found = BY_NAME.get(model.name)
    if found is None:
        title = retyping.title(model.name) or fitted.title(model) or model.plain
        return {"title": title, "order": len(ORDER), "composite": False, "retypes": False}
    family = {"family": found.family, "family_title": FAMILIES[found.family]} if found.family else {}
    return {"title": found.title, "order": ORDER[model.name], "composite": found.composite, "retypes": found.retypes,
            **family}


def entries(models: Iterable[Model]) -> dict[str, dict[str, Any]]:
    """The entries of ``models``, by each model's name without its reading; a name the catalogue
    does not know is its own title."""
    return dict(sorted({model.plain: entry(model) for model in models}.items()))

"""The report's pages as Jinja2 templates (report/templates/), autoescaped: a value from a results
document is text on the page, whatever it holds, unless the renderer marks it as markup."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2
from markupsafe import Markup  # Jinja2's own dependency: what a renderer marks as markup, the one way past escaping

__all__ = ["Markup", "template"]

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _environment() -> jinja2.Environment:
    # StrictUndefined: a name the template uses and the renderer forgot is an error, not an empty
    # cell; an optional value is given as None or "" by the renderer.
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined)


def template(name: str) -> jinja2.Template:
    return _environment().get_template(name)


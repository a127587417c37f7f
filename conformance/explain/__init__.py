"""Explanation by experiment: what a failure line no defect model names depends on, measured on the
backend itself. From a line's smallest item the suite builds probe models (``factors``: the item as
a configuration of the fuzz, each factor a kernel branches on varied one at a time), shrinks it to a
minimal failing model and measures which factors decide (``experiment``); the run's lines are chosen,
budgeted and annotated in ``lines``. Probes never change an item's outcome: they add to its record."""

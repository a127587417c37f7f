"""The plots of a run's report, drawn by matplotlib (as the scoreboard's are) into inline SVG: no
script, nothing fetched. Outcomes per operator version as stacked bars, failures per cause line as
bars (new against known), and what a backend could not run as a heatmap (operator version x rank,
a cell per element type), one panel per backend each.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from typing import Any

from ..outcomes import REPORT_WORDS, Outcome
from .causes import Cluster
from .record import ItemRecord, RunDocument

# The colours of the outcomes, as the scoreboard draws them.
COLOURS = dict(zip(REPORT_WORDS, ("#4caf50", "#9ccc65", "#7986cb", "#b0bec5", "#cfd8dc", "#e53935", "#fb8c00",
                                  "#8e24aa", "#6d4c41", "#f06292")))
# A run of fewer items gets no plots: its tables are shorter than the plots would be, and say all
# they would; the matplotlib import and three figures (about 0.8 s) would be most of such a report's
# time (the project's own tests write a hundred small reports).
PLOTTED_FROM = 100
# Cause lines drawn per backend, at most: the longest first; the report lists every line below.
PLOTTED_CAUSES = 15
LABEL = 70  # characters of a cause's signature beside its bar
DIAGNOSED = "reproduced exactly by a defect model: "  # said by every diagnosed line: its bar says the model


def plots(document: RunDocument, clusters: dict[str, list[Cluster]], known: set[tuple[str, str]]) -> str:
    """The three figures, each an inline SVG (``known``: the (backend, signature) of the failure
    lines an expectations entry names); for a run of fewer than PLOTTED_FROM items, a note."""
    if len(document["items"]) < PLOTTED_FROM:
        return (f"<p class='muted'>No plots for a run of {len(document['items'])} items (fewer than {PLOTTED_FROM}): "
                "the tables below say all they would.</p>")
    import matplotlib

    # "$...$" in a name from a file is text, not TeX; a fixed salt names the SVG's clip paths alike
    # in every run, so that one run draws one page
    with matplotlib.rc_context({"text.parse_math": False, "svg.fonttype": "none", "svg.hashsalt": "conformance"}):
        return "".join(figure for figure in (_outcomes(document["items"]), _causes(clusters, known),
                                             _unsupported(document["items"])) if figure)


def _figure(rows: int, width: float, height: float) -> tuple[Any, Any]:
    """A figure of ``rows`` panels, without pyplot (whose import and figure manager a page to
    write needs neither of: a report is written at the end of every run)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasSVG(figure)
    return figure, figure.subplots(rows, 1, squeeze=False)


def _svg(figure: Any) -> str:
    figure.tight_layout()
    buffer = io.StringIO()
    # no metadata: no date (the same run draws the same page) and no addresses in the page
    figure.savefig(buffer, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    return f"<figure class='plot'>{text[text.index('<svg'):]}</figure>"


def _plain(text: str, limit: int = 200) -> str:
    """Text from a file, as a plot shows it: no control character, cut short."""
    text = "".join(c if c.isprintable() else " " for c in str(text))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _by_backend(items: list[ItemRecord]) -> dict[str, list[ItemRecord]]:
    found: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in items:
        found[r["backend"]].append(r)
    return dict(found)


def _op_version(r: ItemRecord) -> str:
    return f"{r['op']}-{r['version']}"


def _outcomes(items: list[ItemRecord]) -> str:
    per = _by_backend(items)
    if not per:
        return ""
    figure, axes = _figure(len(per), 10, 2.6 * len(per))
    for axis, (backend, records) in zip(axes[:, 0], per.items()):
        counts: dict[str, Counter] = defaultdict(Counter)
        for r in records:
            counts[_op_version(r)][r["outcome"]] += 1
        versions = sorted(counts, key=lambda v: (v.rpartition("-")[0], int(v.rpartition("-")[2])))
        bottom = [0] * len(versions)
        for word in REPORT_WORDS:
            heights = [counts[v].get(word, 0) for v in versions]
            if any(heights):
                axis.bar([_plain(v, LABEL) for v in versions], heights, bottom=bottom, label=word, color=COLOURS.get(word))
                bottom = [b + h for b, h in zip(bottom, heights)]
        axis.set_title(_plain(f"{backend}: outcomes per operator version"))
        axis.tick_params(axis="x", labelrotation=40, labelsize=7)
        axis.legend(fontsize=7, ncol=5)
    return _svg(figure)


def _causes(clusters: dict[str, list[Cluster]], known: set[tuple[str, str]]) -> str:
    shown = {backend: lines[:PLOTTED_CAUSES] for backend, lines in clusters.items() if lines}
    if not shown:
        return ""
    figure, axes = _figure(len(shown), 10, 0.9 + (0.32 * max(map(len, shown.values())) + 0.6) * len(shown))
    for axis, (backend, lines) in zip(axes[:, 0], shown.items()):
        names = [f"{i + 1}. {_plain(line.signature.replace(DIAGNOSED, ''), LABEL)}" for i, line in enumerate(lines)][::-1]
        sizes = [len(line.records) for line in lines][::-1]
        colours = ["#9e9e9e" if (backend, line.signature) in known else "#e53935" for line in lines][::-1]
        axis.barh(names, sizes, color=colours)
        axis.set_title(_plain(f"{backend}: failing items per cause (red: new, grey: known)"))
        axis.tick_params(axis="y", labelsize=7)
    return _svg(figure)


def _rank(r: ItemRecord) -> int | None:
    inputs = r.get("inputs") or []
    return len(inputs[0]["shape"]) - 2 if inputs else None


def _unsupported(items: list[ItemRecord]) -> str:
    """Per backend with unsupported items: the share of each operator version's items of each rank
    and element type it did not run."""
    per = {b: rs for b, rs in _by_backend(items).items() if any(r["outcome"] == Outcome.UNSUPPORTED.value for r in rs)}
    if not per:
        return ""
    panels = []
    for backend, records in per.items():
        cells: dict[tuple[str, tuple[int, str]], Counter] = defaultdict(Counter)
        for r in records:
            rank = _rank(r)
            if rank is not None:
                cells[_op_version(r), (rank, r["inputs"][0]["dtype"])][r["outcome"] == Outcome.UNSUPPORTED.value] += 1
        rows = sorted({v for v, _ in cells}, key=lambda v: (v.rpartition("-")[0], int(v.rpartition("-")[2])))
        columns = sorted({c for _, c in cells})
        panels.append((backend, rows, columns, cells))
    figure, axes = _figure(len(panels), 12, 1.2 + 0.3 * sum(len(p[1]) for p in panels) + 1.6 * len(panels))
    for axis, (backend, rows, columns, cells) in zip(axes[:, 0], panels):
        share = [[cells[row, column][True] / max(1, sum(cells[row, column].values())) if (row, column) in cells
                  else float("nan") for column in columns] for row in rows]
        image = axis.imshow(share, cmap="Reds", vmin=0, vmax=1, aspect="auto")
        axis.set_xticks(range(len(columns)), [f"{rank}-D {dtype}" for rank, dtype in columns], rotation=60, fontsize=6)
        axis.set_yticks(range(len(rows)), [_plain(r, LABEL) for r in rows], fontsize=7)
        axis.set_title(_plain(f"{backend}: share of items unsupported (operator version x rank, element type)"))
        figure.colorbar(image, ax=axis, fraction=0.02)
    return _svg(figure)

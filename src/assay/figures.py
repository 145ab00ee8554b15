"""PNG figures without pyplot: matplotlib's object API on an Agg canvas, imported only when a
figure is drawn, so no GUI backend or global pyplot state is touched and nothing stays open."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def png_figure(
    path: str | Path,
    *,
    rows: int = 1,
    heights: tuple[int, ...] = (1,),
    size: tuple[float, float] | None = None,
) -> Iterator[Any]:
    """Yield a list of ``rows`` axes; on exit save the figure to ``path`` as PNG (creating its
    folder). ``size``: inches, default 6 x 4.5 for one row and 6 x 6 for more."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size or (6.0, 4.5 if rows == 1 else 6.0), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 1, sharex=rows > 1, gridspec_kw={"height_ratios": heights})
    yield [axes] if rows == 1 else list(axes)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="png", dpi=110)
    figure.clear()

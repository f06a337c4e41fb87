"""What every matplotlib figure of a report shares: the Agg backend (no display), the colour-blind-safe
palette (report/palette.py) as every axis's colour cycle, and saving into a batch of files."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from sslperf.plotting import palette  # noqa: E402
from sslperf.userfiles import Batch  # noqa: E402

# The palette as matplotlib's colour cycle, so that "C0", "C1" … and every default colour (a cap's fill
# included) are the palette's: matplotlib's own cycle sets red beside green.
matplotlib.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=list(palette.SERIES))


@dataclass
class Figure:
    name: str            # file stem
    title: str
    files: list[Path]


def subplots(*args, **kwargs):
    """plt.subplots, every axis cycling through the palette (set above)."""
    return plt.subplots(*args, **kwargs)


def save(fig, files: Batch, name: str, formats: tuple[str, ...]) -> list[Path]:
    """The figure in each format, added to the files to write (none is written before all are checked)."""
    paths = []
    for fmt in formats:
        data = io.BytesIO()
        fig.savefig(data, format=fmt, bbox_inches="tight", dpi=110 if fmt == "png" else None,
                    metadata={"Software" if fmt == "png" else "Creator": "sslperf"})
        paths.append(files.add(f"{name}.{fmt}", data.getvalue()))
    plt.close(fig)
    return paths

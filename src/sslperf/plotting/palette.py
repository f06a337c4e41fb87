"""The report's colours, one set for the interactive charts (handed to dashboard.js with the data), the
matplotlib figures and the page's style: Okabe and Ito's palette ("Color Universal Design", 2002), whose
colours stay apart for the common forms of colour blindness. A verdict is never told by colour alone: faster
and slower also carry ▲ / ▼ (or a triangle marker), a tie is grey and says ~."""

from __future__ import annotations

# Okabe–Ito, in the order series take them; their yellow (#F0E442) is left out: it vanishes on white.
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "bluish green": "#009E73", "reddish purple": "#CC79A7",
             "sky blue": "#56B4E9", "vermillion": "#D55E00", "black": "#000000"}
SERIES = tuple(OKABE_ITO.values())

# Verdicts: blue against vermillion (apart for every form of colour blindness), a tie grey.
FASTER, SLOWER, TIE = OKABE_ITO["blue"], OKABE_ITO["vermillion"], "#999999"
VERDICT = {"faster": FASTER, "slower": SLOWER, "~": TIE, "?": TIE}


def series_colour(index: int) -> str:
    return SERIES[index % len(SERIES)]


def for_page() -> dict:
    """What the page's script draws with (no colour is written in dashboard.js itself)."""
    return {"series": list(SERIES), "verdict": VERDICT}

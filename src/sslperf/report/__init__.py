"""Outputs that read the one result model: terminal tables (and, as they
land, exports, plots and the HTML report)."""

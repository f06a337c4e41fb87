"""Libraries: sources, builds, variants, the catalog, and libraries in hand."""

"""Libraries: sources, builds, variants, the releases on offer, and libraries in hand."""

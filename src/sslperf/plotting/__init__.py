"""sslperf's colours (one per library, used by every chart and page) and matplotlib set up once for static figures
(headless, SVG and PNG): below every feature that draws, so that a feature's own plot (scale's curves) and the
report draw alike without the feature depending on the report."""

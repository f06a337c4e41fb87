"""Outputs that read the one result model (sslperf.results):

- terminal.py: the tables a verb prints; verdict_tables.py: `compare`'s;
- export.py: JSON, CSV and Markdown of a run;
- directory.py: what `sslperf report` writes into a directory, from
  run_page.py (report.html, opening with summary.py's answer),
  history_page.py (history.html), hosts_page.py (hosts.html) and
  figures.py (PNG/SVG, on mpl.py; versions_figure.py: version over
  version from the verdict rule), the pages built on page_frame.py and
  charts.py (the charts' data) with dashboard.js drawing them;
  ranking.py: first, second and third per case; palette.py: the
  colour-blind-safe colours of every chart and figure.
"""

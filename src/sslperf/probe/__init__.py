"""Probes: sslperf's plan in one archive that measures where sslperf is not installed (archive), and the results
archive it writes turned back into a run (results)."""

"""`sslperf scale`: thread sweeps, scaling efficiency with its interval, and why a curve bends (contention)."""

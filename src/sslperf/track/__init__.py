"""`sslperf track`: a branch of a local clone measured commit by commit.

Each call lists the branch's first-parent commits newest first, leaves out
those this host has measured already (a complete run of theirs is in the
store), builds at most `limit` of the rest (cached; a commit that does not
build is recorded as skipped, with the reason, and not tried again) and
measures the chosen cases on each — wall time and instruction counts, one
stored run per commit and metric (loopback and real-server cases are timed
by the wall clock only; every case in the one scheduler's rounds), keyed by
the commit, its date and the host. Re-running measures nothing twice; a call stopped half way leaves
the commits it finished stored and the rest for the next call. The runs
form series `sslperf regressions` and `report --history` read."""

from sslperf.track.commits import Commit, first_parent
from sslperf.track.tracking import Events, Outcome, TrackRequest, measurable, metrics, track

__all__ = ["Commit", "Events", "Outcome", "TrackRequest", "first_parent", "measurable", "metrics", "track"]

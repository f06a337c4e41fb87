"""Which stored runs `recommend` argues from by default (recommend/reuse.py), on a real SQLite store: the newest
complete run of the library on this host, at most 7 days old, that holds every case the advice needs (one as the
CPU is, one with AES-NI hidden); --fresh none; --from-run the runs named. The real command's reuse is tested in
test_recommend.py."""

import datetime as dt

import pytest

from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure import suites
from sslperf.measure.environment import host_name
from sslperf.recommend import decide, reuse
from sslperf.results import LibInfo, Measurement, Run
from sslperf.store import Store

LIB = Lib("openssl-test", "built", "openssl", "3.0.8")
NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.timezone.utc)
PLAIN, MASKED = decide.needed_cases(128)


def keep(store, run_id: str, hours_ago: float, cases, mask=None, source="sslperf recommend", state="complete",
         host=None, version="3.0.8"):
    started = (NOW - dt.timedelta(hours=hours_ago)).isoformat(timespec="seconds")
    run = Run(run_id, started, {}, {"host": host or host_name(), "mask": mask}, state=state,
              complete=state == "complete", finished=started)
    run.libs = [LibInfo(LIB.name, "openssl", version, "OpenSSL 3.0.8", "default", "built")]
    run.measurements = [Measurement.of(suites.parse_case(c), LIB.name, ops=[10], wall_ns=[1000], cpu_ns=[1000]) for c in cases]
    store.save(run, source)


@pytest.fixture
def store(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    keep(store, "20261117-120000-old", 8 * 24, PLAIN)                              # too old
    keep(store, "20261125-100000-plain", 2, PLAIN)                                 # reused
    keep(store, "20261125-103000-masked", 1.5, MASKED, mask="no-aesni")           # reused
    keep(store, "20261125-110000-speed", 1, PLAIN[:5], source="sslperf speed")     # lacks cases
    keep(store, "20261125-111000-there", 0.8, PLAIN, host="another-host")          # another machine
    keep(store, "20261125-112000-stopped", 0.6, PLAIN, state="interrupted")        # not complete
    keep(store, "20261125-113000-noise", 0.5, PLAIN, source="sslperf noise")       # made for another question
    return store


def test_the_newest_recent_complete_runs_holding_every_case_are_reused_and_named(store):
    chosen = reuse.choose(store, LIB, 128, masked_too=True, now=NOW)
    assert [r.id for r in chosen.runs] == ["20261125-100000-plain", "20261125-103000-masked"]
    assert chosen.reused
    said = chosen.describe(["20261125-100000-plain", "20261125-103000-masked"], now=NOW)
    assert said == ("figures from run 20261125-100000-plain (recommend, 2 h ago), run 20261125-103000-masked "
                    "(recommend with AES-NI hidden, 90 min ago); --fresh measures anew")


def test_fresh_measures_anew_and_from_run_names_the_runs(store):
    fresh = reuse.choose(store, LIB, 128, fresh=True, masked_too=True, now=NOW)
    assert fresh.runs == [] and not fresh.reused
    assert fresh.describe(["20261125-120500-new"], now=NOW) == "measured now: run 20261125-120500-new"
    named = reuse.choose(store, LIB, 128, ("20261125-110000-speed",), now=NOW)
    assert [r.id for r in named.runs] == ["20261125-110000-speed"] and not named.reused
    assert "--fresh" not in named.describe(["20261125-110000-speed", "20261125-120500-new"], now=NOW)
    with pytest.raises(SslperfError, match="give one or the other"):
        reuse.choose(store, LIB, 128, ("20261125-110000-speed",), fresh=True)


def test_no_run_is_reused_for_another_build_or_without_a_store(store):
    rebuilt = Lib(LIB.name, "built", "openssl", "3.0.9")
    assert reuse.choose(store, rebuilt, 128, masked_too=True, now=NOW).runs == []
    assert reuse.choose(None, LIB, 128, masked_too=True, now=NOW).runs == []
    # A week later nothing is recent enough.
    assert reuse.choose(store, LIB, 128, masked_too=True, now=NOW + dt.timedelta(days=7)).runs == []

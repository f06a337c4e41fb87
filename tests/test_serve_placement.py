"""A server under load runs where it was placed: every thread of it on the server's CPUs only, one worker bound to
each (serve_load.load.placement_problem reads /proc as a round begins). Checked against a real process group whose
threads bind themselves to CPUs, as nginx's workers and HAProxy's threads do."""

import os
import subprocess
import sys
import time

import pytest

from sslperf.errors import SslperfError
from sslperf.serve_load.load import placement_problem
from sslperf.serve_load.rounds import Plan

TOY = """
import os, threading, time
cpus = [int(c) for c in os.environ["BIND"].split(",")]
os.sched_setaffinity(0, set(cpus))                  # the master: the server's CPUs
def worker(cpu):
    os.sched_setaffinity(threading.get_native_id(), {cpu})
    time.sleep(60)
for cpu in cpus:
    threading.Thread(target=worker, args=(cpu,), daemon=True).start()
print("ready", flush=True)
time.sleep(60)
"""


def toy_server(cpus: str) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", TOY], env={**os.environ, "BIND": cpus}, stdout=subprocess.PIPE,
                             text=True, process_group=0)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    return child


# Two CPUs to itself: the test command pins each parallel worker to one CPU, so it runs with the tests that
# run alone (the timing marker); it is skipped only where the machine has one CPU.
@pytest.mark.timing
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_a_server_with_a_worker_bound_to_each_of_its_cpus_is_placed_as_asked():
    cpus = sorted(os.sched_getaffinity(0))[:2]
    child = toy_server(",".join(map(str, cpus)))
    try:
        placement_problem(child.pid, tuple(cpus), "toy")                 # as asked: no error
        with pytest.raises(SslperfError, match="not placed as asked"):
            placement_problem(child.pid, (cpus[0],), "toy")             # it also runs on the other CPU
    finally:
        child.kill()
        child.wait()


def test_by_default_a_machine_of_four_cpus_or_more_gives_the_server_half(monkeypatch):
    from sslperf.serve_load import rounds

    monkeypatch.setattr(rounds.pinning, "allowed", lambda: list(range(16)))
    servers, clients = Plan().cpus()
    assert servers == tuple(range(8)) and clients == tuple(range(8, 16))
    assert not any("so few server CPUs" in w for w in Plan().warnings())
    monkeypatch.setattr(rounds.pinning, "allowed", lambda: [0, 1])
    monkeypatch.setattr(rounds.pinning, "loopback_cpus", lambda: (0, 1))
    assert Plan().cpus() == ((0,), (1,)) and any("so few server CPUs" in w for w in Plan().warnings())

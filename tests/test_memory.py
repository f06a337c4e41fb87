"""Memory per TLS connection, for real: the system library's own client and
server, N pairs in lockstep, counted through its allocator hooks."""

import json

from conftest import run_cli


def memory_run(*extra):
    result = run_cli("tls", "--memory", "--json", "--no-store", *extra)
    assert result.returncode == 0, result.stderr
    return {m["case"]: m for m in json.loads(result.stdout)["measurements"]}


def test_bytes_per_connection_are_counted_per_side_and_stable_as_n_grows(sslperf_dirs):
    got = memory_run("--connections", "20,200")
    assert set(got) == {"tls/memory/tls1.3/x25519/ecdsa-p256", "tls/memory/tls1.2/x25519/rsa-2048"}
    for case, m in got.items():
        assert m["status"] == "ok", (case, m["reason"])
        assert m["note"] == "allocator hooks (CRYPTO_set_mem_functions)"     # OpenSSL has them
        x = m["figures"]
        assert x["connections"] == [20, 200]
        for side in ("client_bytes", "server_bytes"):
            small, large = x[side]
            # an established connection holds kilobytes on each side (buffers, keys, the peer's certificate)
            assert 1_000 < small < 200_000 and 1_000 < large < 200_000, (case, side, x)
            # per connection, ten times as many connections hold about the same each
            assert abs(large / small - 1) < 0.25, (case, side, x)
        for n, per in zip(x["connections"], x["established_bytes"]):
            assert per >= 0.9 * (x["client_bytes"][0] + x["server_bytes"][0])
        # the handshake needs more than the established connection keeps
        assert all(p >= e for p, e in zip(x["peak_bytes"], x["established_bytes"]))


def test_the_memory_table_says_how_it_counted(sslperf_dirs):
    result = run_cli("tls", "memory", "--connections", "10", "--details", "--no-store", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "TLS memory per connection" in result.stdout
    assert "MiB for 10k pairs" in result.stdout and "CRYPTO_set_mem_functions" in result.stdout

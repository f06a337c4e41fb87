"""Which cases `sslperf tls quic` makes from --case and --filter: a QUIC id given is measured (not ignored), a
filter keeps what --list prints, and a path named in the ids is the run's path. Through the real command, with
--list (nothing is measured)."""

from conftest import run_cli


def listed(*args: str) -> list[str]:
    result = run_cli("tls", "quic", "--list", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_a_filter_alone_keeps_the_listed_cases_it_matches(sslperf_dirs):
    assert listed("--filter", "p-256") == ["tls/loopback/tls1.3/p-256/ecdsa-p256/shared", "tls/quic/p-256/ecdsa-p256"]


def test_a_quic_id_given_is_the_case_measured_beside_its_tcp_partner(sslperf_dirs):
    assert listed("--case", "tls/quic/x25519/rsa-2048") == ["tls/loopback/tls1.3/x25519/rsa-2048/shared",
                                                            "tls/quic/x25519/rsa-2048"]
    assert listed("--transfer", "--case", "tls/quic-transfer/aes-128-gcm/1024") == [
        "tls/transfer-tcp/tls1.3/aes-128-gcm/1024/no-ktls", "tls/quic-transfer/aes-128-gcm/1024"]


def test_a_transfer_filter_over_the_in_memory_ids_still_chooses_the_suites(sslperf_dirs):
    assert listed("--transfer", "--filter", "tls/transfer/tls1.3/chacha20-poly1305/*") == [
        "tls/transfer-tcp/tls1.3/chacha20-poly1305/16384/no-ktls", "tls/quic-transfer/chacha20-poly1305/16384"]


def test_the_path_a_quic_id_names_is_the_runs_path(sslperf_dirs):
    assert listed("--case", "tls/quic/x25519/ecdsa-p256/rtt50ms-loss1pct") == [
        "tls/quic/x25519/ecdsa-p256/rtt50ms-loss1pct"]
    two = run_cli("tls", "quic", "--list", "--case", "tls/quic/x25519/ecdsa-p256/rtt50ms",
                  "--case", "tls/quic/x25519/ecdsa-p256/rtt10ms")
    assert two.returncode == 2 and "name 2 network paths" in two.stderr, two.stderr


def test_a_filter_that_matches_nothing_is_refused(sslperf_dirs):
    result = run_cli("tls", "quic", "--list", "--filter", "no-such-group")
    assert result.returncode == 2 and "No case matches no-such-group" in result.stderr

"""A table of bad inputs for every verb: each gives exit code 2 (bad input or
environment) with one paragraph that names the problem, never a traceback,
and nothing is measured or recorded before the input is checked."""

import hashlib
import json

import pytest
from conftest import DATA, run_cli

NOT_A_DIR = "/etc/passwd/x"       # a path under a file: no directory can be made there

BAD_INPUTS = [
    (["speed", "--case", "kex/x25519/derive", "--out", f"{NOT_A_DIR}/run.json"], "Cannot use --out"),
    (["speed", "--case", "nosuch/case"], "is not a case sslperf knows"),
    (["speed", "--case", "kex/x25519/derive", "--cpu", "4096"], "CPU 4096 is not one"),
    (["speed", "--lib", "nosuch-1.0"], "No built or registered library"),
    (["speed", "--case", "kex/x25519/derive", "--sizes", "0"], "is not a size"),
    (["api", "--lib", "nosuch-1.0"], "No built or registered library"),
    (["tls", "threads", "--threads", "0,x"], "is not a list of counts between 1 and 256"),
    (["tls", "memory", "--connections", "0"], "is not a list of counts between 1 and 100,000"),
    (["tls", "loopback", "--server-lib", "nosuch-1.0"], "No built or registered library"),
    (["tls", "quic", "--transfer", "--memory"], "different QUIC measurements"),
    (["tls", "--loopback", "--threads", "1"], "are different measurements"),      # the old spellings, refused alike
    (["tls", "--transfer", "--memory"], "--transfer and --memory are different measurements"),
    (["report", "latest", "--out", NOT_A_DIR], "Cannot use --out"),
    (["profile", "kex/x25519/derive", "--out", NOT_A_DIR], "Cannot use --out"),
    (["compare", "nosuch-lib", "other-lib"], "No run in the store"),
    (["runs", "show", "nosuchrun"], "No run `nosuchrun`"),
    (["libs", "remove", "openssl"], "No built or registered library"),
    (["offload", "scan", "--file", "/etc/passwd"], "holds no /proc/crypto entry"),
    (["import", "/etc/passwd"], "/etc/passwd"),
    (["--db", "notaurl", "runs", "list"], "notaurl"),
]


@pytest.mark.parametrize("args, needle", BAD_INPUTS, ids=[" ".join(a[:4]) for a, _ in BAD_INPUTS])
def test_bad_input_is_one_paragraph_with_exit_2(sslperf_here, args, needle):
    result = sslperf_here(*args)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.startswith("error: ") and needle in result.stderr, result.stderr


def test_bad_input_records_no_run(sslperf_dirs):
    for args in (["tls", "threads", "--threads", "0,x"], ["tls", "loopback", "--server-lib", "nosuch-1.0"],
                 ["speed", "--case", "kex/x25519/derive", "--out", f"{NOT_A_DIR}/run.json"]):
        assert run_cli(*args).returncode == 2
    assert json.loads(run_cli("runs", "list", "--json").stdout or "[]") == []


def test_user_text_is_printed_as_it_is(sslperf_dirs):
    # rich would turn `:x:` into an emoji and `[bold]` into style; user text must print verbatim.
    result = run_cli("speed", "--lib", "root:x:0:0[bold]")
    assert result.returncode == 2 and "root:x:0:0[bold]" in result.stderr, result.stderr


def test_libs_remove_acts_on_exact_names_only(sslperf_dirs):
    cache, _ = sslperf_dirs
    home = cache / "libs" / "openssl-3.6.3-abc"
    (home / "prefix" / "include" / "openssl").mkdir(parents=True)
    (home / "prefix" / "lib").mkdir()
    (home / "build.json").write_text(json.dumps({"name": "openssl-3.6.3", "flavor": "openssl", "version": "3.6.3",
                                                 "variants": [], "key": hashlib.sha256(b"x").hexdigest()}))
    result = run_cli("libs", "remove", "openssl")
    assert result.returncode == 2 and "not the exact name" in result.stderr and "openssl-3.6.3" in result.stderr
    assert home.exists()
    result = run_cli("libs", "remove", "openssl-3.6.3")
    assert result.returncode == 0 and "removed openssl-3.6.3" in result.stdout and not home.exists()


def test_runs_rm_deletes_exact_or_unique_runs_only(sslperf_dirs):
    for _ in range(2):
        assert run_cli("speed", "--case", "kex/x25519/derive", "--samples", "3", "--time", "2").returncode == 0
    ids = [row["id"] for row in json.loads(run_cli("runs", "list", "--json").stdout)]
    common = ids[0][:4]                                  # "2026": both runs start with it
    for bad in ("", "latest", common):
        result = run_cli("runs", "rm", bad)
        assert result.returncode == 2 and "nothing was deleted" in result.stderr, (bad, result.stderr)
    assert len(json.loads(run_cli("runs", "list", "--json").stdout)) == 2
    result = run_cli("runs", "rm", ids[0])
    assert result.returncode == 0 and f"deleted {ids[0]}" in result.stdout and "1 result)" in result.stdout
    assert [row["id"] for row in json.loads(run_cli("runs", "list", "--json").stdout)] == ids[1:]


# ---- numeric options: nan, infinities and values out of range (issue 21) ---------------------------

FLOAT_OPTIONS = [  # (arguments before the option, the option, a value in range)
    (["speed", "--case", "kex/x25519/derive"], "--time", "5"),
    (["api"], "--time", "5"),
    (["tls"], "--time", "5"),
    (["speed", "--case", "kex/x25519/derive", "--threads", "1"], "--thread-seconds", "1"),
    (["api", "--threads", "1"], "--thread-seconds", "1"),
    (["tls", "--threads", "1"], "--thread-seconds", "1"),
    (["profile", "kex/x25519/derive", "--lib", "system"], "--seconds", "1"),
    (["offload", "bench"], "--time", "5"),
    (["compare", "a", "b"], "--threshold", "2"),
    (["compare", "a", "b"], "--alpha", "0.05"),
    (["compare", "a", "b"], "--fail-above", "5"),
    (["bisect", "kex/x25519/derive", "--good", "openssl-3.0.0", "--bad", "openssl-3.0.8"], "--threshold", "1"),
    (["bisect", "kex/x25519/derive", "--good", "openssl-3.0.0", "--bad", "openssl-3.0.8"], "--alpha", "0.05"),
    (["bisect", "kex/x25519/derive", "--good", "openssl-3.0.0", "--bad", "openssl-3.0.8"], "--time", "30"),
    (["noise"], "--threshold", "2"),
]


@pytest.mark.parametrize("before, option, _", FLOAT_OPTIONS, ids=[f"{b[0]} {o}" for b, o, _ in FLOAT_OPTIONS])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e400"])
def test_every_float_option_refuses_non_finite_and_out_of_range_values(sslperf_here, before, option, _, value):
    result = sslperf_here(*before, f"{option}={value}")
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert f"Invalid value for '{option}'" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_alpha_of_0_or_1_and_fail_above_100_are_refused(sslperf_here):
    for option, value in (("--alpha", "0"), ("--alpha", "1"), ("--fail-above", "100")):
        result = sslperf_here("compare", "a", "b", f"{option}={value}")
        assert result.returncode == 2 and "Invalid value" in result.stderr, (option, value, result.stderr)


def test_usage_errors_exit_2_as_the_help_says(sslperf_here):
    assert "2 a usage error" in " ".join(sslperf_here("--help").stdout.split())
    for args in (["speed", "--no-such-option"], ["nosuchverb"], ["speed", "--samples", "x"]):
        assert sslperf_here(*args).returncode == 2, args


# ---- small ones (issue 21) -------------------------------------------------------------------------

def test_runs_rm_with_a_short_prefix_asks_for_the_full_id(sslperf_dirs):
    first = run_cli("import", DATA / "speed" / "openssl-3.0.8-text.txt")
    assert first.returncode == 0
    [run_id] = [row["id"] for row in json.loads(run_cli("runs", "list", "--json").stdout)]
    for prefix in (run_id[:1], run_id[:8]):          # unique, since the store holds one run: still refused
        result = run_cli("runs", "rm", prefix)
        assert result.returncode == 2 and "full id" in result.stderr and "nothing was deleted" in result.stderr
    assert run_cli("runs", "rm", run_id[:15]).returncode == 0


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "x..y", "", " lead", "-dash", "a" * 101, "tab\there"])
def test_libs_add_takes_plain_names_only(sslperf_here, tmp_path, name):
    result = sslperf_here("libs", "add", "--prefix", tmp_path, "--", name)
    assert result.returncode == 2 and "cannot name a library" in result.stderr, result.stderr


def test_import_host_is_bounded_and_plain(sslperf_here):
    for host in ("h" * 300, "a\nb", ""):
        result = sslperf_here("import", DATA / "speed" / "openssl-3.0.8-text.txt", "--host", host)
        assert result.returncode == 2 and "host name" in result.stderr, result.stderr
    assert sslperf_here("runs", "list", "--json").stdout.strip() in ("", "[]")

"""`sslperf exec`: the user's own command against each library, interleaved by the scheduler, checked by the
loader's trace (real programs: python3 and curl against the system library, as itself and as a second column)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from conftest import SHARED_LIB, run_cli

from sslperf import figures
from sslperf.errors import SslperfError
from sslperf.measure import exec_plan
from sslperf.measure.modes import program
from sslperf.measure.request import Request

# A TLS client in Python: it loads libssl through _ssl (dlopen), makes a context with the system's CA store.
PYTHON_TLS = ["python3", "-c", "import ssl; ssl.create_default_context()"]


@pytest.fixture
def dirs(sslperf_dirs):
    cache, data = sslperf_dirs
    return data


def runs_stored(data: Path) -> list[str]:
    result = run_cli("runs", "list", "--json", env={"SSLPERF_DATA_DIR": str(data)})
    assert result.returncode == 0, result.stderr
    return [r["id"] for r in json.loads(result.stdout)] if result.stdout.strip() else []


def test_a_python_tls_client_is_timed_run_by_run_interleaved_with_verdicts_and_the_loader_check(dirs, tmp_path):
    out = tmp_path / "hyperfine.json"
    result = run_cli("exec", "--lib", "system", "--lib", "system#2", "--runs", "3", "--rounds", "4", "--json",
                     "--export-json", out, "--", *PYTHON_TLS, timeout=600)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    schema = json.loads((Path(__file__).parent.parent / "docs" / "reference" / "run.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(run)]
    assert not errors, errors[:3]                  # the run JSON's schema knows the exec mode, family and figures
    assert run["settings"]["exec"]["command"] == PYTHON_TLS
    assert all(said.startswith("libcrypto.so.3, libssl.so.3 from ") for said in run["settings"]["exec"]["loaded"].values())
    got = {m["lib"]: m for m in run["measurements"]}
    assert set(got) == {"system", "system#2"}
    for m in got.values():
        assert m["case"] == f"exec/{exec_plan.default_name(tuple(PYTHON_TLS))}" and m["status"] == "ok"
        assert m["ops"] == [1] * 12 and len(m["wall_ns"]) == 12 and all(w > 0 for w in m["wall_ns"])
        assert m["figures"][figures.ROUND] == [r for r in range(4) for _ in range(3)]
        # CPU time is the kernel's for the run: user + system, each recorded apart.
        assert m["cpu_ns"] == [u + s for u, s in zip(m["figures"][figures.USER_CPU], m["figures"][figures.SYSTEM_CPU])]
        assert all(rss > 1_000_000 for rss in m["figures"][figures.MAX_RSS])      # a Python is more than 1 MB
    # Interleaved: in each round the libraries start in turn, and the order reverses from one round to the next.
    first = [min((s, lib) for lib in got for s, r in zip(got[lib]["figures"][figures.START],
                                                        got[lib]["figures"][figures.ROUND]) if r == rnd)[1]
             for rnd in range(4)]
    assert first[0] != first[1] and first[1] != first[2] and first[2] != first[3], first
    shown = run_cli("runs", "show", run["id"], env={"SSLPERF_DATA_DIR": str(dirs)})
    assert shown.returncode == 0 and "Your program, run against each library" in shown.stdout, shown.stdout
    assert any(mark in shown.stdout for mark in ("~", "▲", "▼", "?")), shown.stdout       # a verdict per library
    # hyperfine's format: one result per library, every run's time, the command and the library named.
    exported = json.loads(out.read_text())["results"]
    assert [r["parameters"]["lib"] for r in exported] == ["system", "system#2"]
    for r in exported:
        assert len(r["times"]) == 12 and r["min"] <= r["mean"] <= r["max"] and r["exit_codes"] == [0] * 12
        assert r["command"].startswith("python3 -c ")
    again = run_cli("runs", "export", run["id"], "--format", "hyperfine", env={"SSLPERF_DATA_DIR": str(dirs)})
    assert again.returncode == 0 and json.loads(again.stdout) == {"results": exported}


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_curl_is_measured_and_said_to_load_the_librarys_files(dirs):
    result = run_cli("exec", "--lib", "system", "--runs", "2", "--rounds", "1", "--warmup", "0", "--name", "curl-v",
                     "--", "curl", "--version", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "curl-v" in result.stdout and "ms" in result.stdout


def test_prepare_runs_before_every_run_and_setup_and_cleanup_once_per_library(dirs, tmp_path):
    log = tmp_path / "log"
    append = f"python3 -c \"open('{log}', 'a').write('{{}} {{lib}}\\n'.format(__import__('sys').argv[1]))\""
    result = run_cli("exec", "--lib", "system", "--lib", "system#2", "--runs", "2", "--rounds", "2", "--warmup", "1",
                     "--prepare", append + " prepare", "--setup", append + " setup", "--cleanup",
                     append + " cleanup", "--", *PYTHON_TLS, timeout=600)
    assert result.returncode == 0, result.stderr
    lines = log.read_text().splitlines()
    for lib in ("system", "system#2"):
        # Two passes (rounds), each: one warm-up and two timed runs, every one prepared.
        assert lines.count(f"prepare {lib}") == 2 * (1 + 2), lines
        assert lines.count(f"setup {lib}") == 1 and lines.count(f"cleanup {lib}") == 1, lines
    assert lines[0].startswith("setup") and lines[-1].startswith("cleanup"), lines


def test_a_run_that_fails_is_reported_with_its_exit_status_and_never_timed(dirs, tmp_path):
    counter = tmp_path / "count"
    # Succeeds twice (the loader's checked run and the warm-up), then fails: the first timed run exits 4.
    script = (f"import ssl, sys, pathlib; p = pathlib.Path('{counter}'); n = int(p.read_text() or 0) if p.exists() "
              "else 0; p.write_text(str(n + 1)); print('run', n); sys.exit(4 if n >= 2 else 0)")
    result = run_cli("exec", "--lib", "system", "--runs", "3", "--rounds", "1", "--json", "--", "python3", "-c",
                     script, timeout=300)
    run = json.loads(result.stdout)
    (m,) = run["measurements"]
    assert m["status"] == "error" and "exited with 4" in m["reason"] and "run 2" in m["reason"], m["reason"]
    assert m["wall_ns"] == [] and m["ops"] == []


def test_a_static_program_is_refused_in_one_paragraph_and_nothing_is_stored(dirs, tmp_path):
    source = tmp_path / "s.c"
    source.write_text("int main(void) { return 0; }\n")
    if subprocess.run(["gcc", "-static", "-o", str(tmp_path / "s"), str(source)], timeout=120).returncode != 0:
        pytest.skip("no static libc here")
    result = run_cli("exec", "--lib", "system", "--", tmp_path / "s", timeout=120)
    assert result.returncode == 2, result.stderr
    assert "statically linked" in result.stderr and "Traceback" not in result.stderr
    assert runs_stored(dirs) == []


def test_a_command_that_loads_no_tls_library_or_none_at_all_is_refused(dirs):
    result = run_cli("exec", "--lib", "system", "--", "true", timeout=120)
    assert result.returncode == 2 and "loaded neither libssl nor libcrypto" in result.stderr, result.stderr
    missing = run_cli("exec", "--lib", "system", timeout=60)
    assert missing.returncode == 2 and "needs the command to measure after `--`" in missing.stderr, missing.stderr


def test_the_case_name_is_the_programs_and_a_digest_of_the_whole_command():
    assert exec_plan.default_name(("/usr/bin/curl", "-s", "URL")).startswith("curl-")
    assert exec_plan.default_name(("curl", "-s", "URL")) == exec_plan.default_name(("curl", "-s", "URL"))
    assert exec_plan.default_name(("curl", "-s", "A")) != exec_plan.default_name(("curl", "-s", "B"))
    assert program.case("curl-1234abcd").id == "exec/curl-1234abcd"
    for bad in ("a/b", "-x", "", "x" * 81):
        with pytest.raises(SslperfError):
            exec_plan.request({**_params(), "name": bad})
    with pytest.raises(SslperfError) as unsplit:
        exec_plan.argv_of("echo 'unclosed", "--prepare")
    assert "--prepare" in unsplit.value.message


def _params(**given) -> dict:
    from sslperf.cli import declared_params

    return declared_params("exec", **{"argv": tuple(PYTHON_TLS), **given})


def test_the_request_goes_as_json_and_back_and_a_fleet_worker_refuses_it():
    from sslperf.fleet.cluster import FleetError
    from sslperf.fleet import tasks
    from sslperf.measure import verbs

    request = verbs.from_params("exec", _params(runs=7, prepare="sync"))
    back = Request.from_json(request.to_json())
    assert back.options["exec"] == program.Options(tuple(PYTHON_TLS), 7, 1, ("sync",), (), (), 600, None)
    assert back.cases == request.cases and back.settings.processes == 5
    with pytest.raises(FleetError) as refused:
        tasks.measure(request.to_json(), "sqlite:///nowhere.db", "fleet-run", 60, pin_here=False)
    assert "never a command sent to it" in refused.value.message


def test_an_argument_with_a_nul_is_refused_in_a_request():
    from sslperf.measure import request_check

    with pytest.raises(request_check.Refused):
        request_check.OPTIONS["exec"]({"command": ["curl", "a\0b"]}, "options.exec")


PROGRAM_11 = """#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <stdio.h>
int main(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    printf("%s\\n", OpenSSL_version(OPENSSL_VERSION));
    SSL_CTX_free(ctx);
    return ctx == NULL;
}
"""


@pytest.mark.slow
def test_a_shared_build_is_given_to_a_program_built_for_its_soname_and_refused_across_sonames(e2e_env, in_e2e_cache,
                                                                                               tmp_path):
    from sslperf.libs import installed, loader

    built = run_cli("libs", "build", SHARED_LIB, env=e2e_env, timeout=1800)
    assert built.returncode == 0, built.stderr + built.stdout
    lib = installed.find(SHARED_LIB)
    assert loader.linkages(lib) == ["static", "shared"]
    assert "static + shared" in run_cli("libs", "list", env=e2e_env).stdout
    # A program built against 1.1.1w's shared libraries, with no RPATH: only the loader's path finds them.
    source = tmp_path / "client11.c"
    source.write_text(PROGRAM_11)
    prefix = lib.prefix
    subprocess.run(["gcc", "-o", str(tmp_path / "client11"), str(source), f"-I{prefix / 'include'}",
                    f"-L{loader.shared_dir(lib)}", "-lssl", "-lcrypto"], check=True, timeout=120)
    result = run_cli("exec", "--lib", SHARED_LIB, "--runs", "2", "--rounds", "1", "--json", "--",
                     tmp_path / "client11", env=e2e_env, timeout=300)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    (m,) = run["measurements"]
    assert m["status"] == "ok" and len(m["wall_ns"]) == 2
    assert run["settings"]["exec"]["loaded"][lib.name] == \
        f"libcrypto.so.1.1, libssl.so.1.1 from {loader.shared_dir(lib)}"
    # The same program on the system's 3.x: the loader finds no libssl.so.1.1 there.
    on_3x = run_cli("exec", "--lib", "system", "--", tmp_path / "client11", env=e2e_env, timeout=300)
    assert on_3x.returncode == 2 and "needs libssl.so.1.1" in on_3x.stderr, on_3x.stderr
    # A program built for 3.x (curl) given 1.1.1w: it loads the system's libssl.so.3 instead, and is refused.
    if shutil.which("curl"):
        curl = run_cli("exec", "--lib", SHARED_LIB, "--", "curl", "--version", env=e2e_env,
                       timeout=300)
        assert curl.returncode == 2, curl.stderr
        assert "libssl.so.3" in curl.stderr and "provides libcrypto.so.1.1, libssl.so.1.1" in curl.stderr, curl.stderr


# A Python HTTPS client: one GET of the URL, trusting the CA file; fails unless the page came back.
PYTHON_GET = ["python3", "-c", "import ssl, sys, urllib.request; ctx = ssl.create_default_context(cafile=sys.argv[1]); "
              "body = urllib.request.urlopen(sys.argv[2], context=ctx, timeout=30).read(); sys.exit(0 if body else 5)"]


def test_a_client_is_measured_against_sslperfs_server_on_loopback_and_port_needs_a_server(dirs):
    result = run_cli("exec", "--lib", "system", "--lib", "system#2", "--server", "system", "--runs", "2", "--rounds",
                     "2", "--json", "--", *PYTHON_GET, "{ca}", "https://localhost:{port}/", timeout=600)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["settings"]["exec"]["server"] == "system"
    assert [m["status"] for m in run["measurements"]] == ["ok", "ok"], [m["reason"] for m in run["measurements"]]
    assert all(len(m["wall_ns"]) == 4 for m in run["measurements"])
    refused = run_cli("exec", "--lib", "system", "--", "curl", "https://localhost:{port}/", timeout=60)
    assert refused.returncode == 2 and "only --server gives" in refused.stderr, refused.stderr
    stored = runs_stored(dirs)
    unknown = run_cli("exec", "--lib", "system", "--server", "apache:system", "--", *PYTHON_GET, "{ca}",
                      "https://localhost:{port}/", timeout=60)
    assert unknown.returncode == 2 and "names no server sslperf starts" in unknown.stderr, unknown.stderr
    assert runs_stored(dirs) == stored


CURL_GET = ["curl", "-sf", "-o", "/dev/null", "--cacert", "{ca}", "--resolve", "localhost:{port}:127.0.0.1",
            "https://localhost:{port}/"]


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("curl"), reason="needs curl")
def test_the_reverse_each_library_serves_a_client_that_keeps_its_own_library(built_openssl3, in_e2e_cache):
    # A static build: the command could not be given it (no shared objects), but here it only serves.
    result = run_cli("exec", "--lib", built_openssl3, "--lib", "system", "--server", "{lib}", "--runs", "2",
                     "--rounds", "2", "--no-store", "--json", "--", *CURL_GET, timeout=600)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    got = {m["lib"]: m for m in run["measurements"]}
    assert [m["status"] for m in got.values()] == ["ok", "ok"], [m["reason"] for m in got.values()]
    assert got["openssl-3.6.3"]["note"] == "server: sslperf's HTTPS server of openssl-3.6.3"
    assert got["system"]["note"] == "server: sslperf's HTTPS server of system"
    assert run["settings"]["exec"]["loaded"] == {}          # the command was given no library: none was checked
    # Not the reverse, the same static build is refused for the command: it has no shared libssl to give.
    given = run_cli("exec", "--lib", built_openssl3, "--server", "system", "--", *CURL_GET, timeout=300)
    assert given.returncode == 2 and "shared" in given.stderr, given.stderr


@pytest.mark.slow
@pytest.mark.xdist_group("serve")          # the nginx build serve-load's tests make and use: one at a time
@pytest.mark.skipif(not shutil.which("curl"), reason="needs curl")
def test_nginx_built_against_a_library_serves_the_command_for_the_whole_run(built_openssl3, in_e2e_cache):
    result = run_cli("exec", "--lib", "system", "--server", f"nginx:{built_openssl3}", "--runs", "2", "--rounds", "2",
                     "--no-store", "--", *CURL_GET, timeout=1200)
    assert result.returncode == 0, result.stderr
    assert "the command's server: nginx " in result.stdout and " against openssl-3.6.3 (Debian " in result.stdout
    assert "its check GET: TLSv1.3" in result.stdout and "loaded libcrypto.so.3, libssl.so.3 from" in result.stdout


def test_bisect_takes_a_command_only_as_an_exec_case(dirs):
    bare = run_cli("bisect", "exec", "--good", "openssl-3.5.4+shared", "--bad", "openssl-3.6.3+shared", timeout=60)
    assert bare.returncode == 2 and "`sslperf bisect exec` needs the command" in bare.stderr, bare.stderr
    stray = run_cli("bisect", "api/ssl-ctx/new", "--good", "openssl-3.0.0", "--bad", "openssl-3.0.8", "--", "curl",
                    timeout=60)
    assert stray.returncode == 2 and "only an `exec` bisect takes a command" in stray.stderr, stray.stderr
    assert "Traceback" not in bare.stderr + stray.stderr


def _perf_records() -> bool:
    if shutil.which("perf") is None:
        return False
    done = subprocess.run(["perf", "record", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"], capture_output=True,
                          timeout=60)
    return done.returncode == 0


@pytest.mark.skipif(not _perf_records(), reason="perf cannot record here")
def test_profile_names_the_library_functions_whose_share_moved(dirs, tmp_path):
    result = run_cli("exec", "--lib", "system", "--lib", "system#2", "--runs", "1", "--rounds", "1", "--no-store",
                     "--profile", "2", "--profile-out", tmp_path / "prof", "--", "python3", "-c",
                     "import ssl; ssl.create_default_context(cafile='/etc/ssl/certs/ca-certificates.crt')",
                     timeout=600)
    assert result.returncode == 0, result.stderr
    assert "Changed most by inclusive share" in result.stdout and "2 operations in" in result.stdout, result.stdout
    # The CA file's certificates are parsed by libcrypto: its functions are in both profiles, each named with it.
    report = (tmp_path / "prof" / "system.perf-report-dso-symbol.txt").read_text()
    assert "libcrypto.so.3" in report and "PEM_X509_INFO_read_bio_ex" in report
    assert (tmp_path / "prof" / "system_2.perf.data").exists()


def test_track_of_a_command_builds_each_commit_with_its_shared_libraries_and_runs_the_command(sslperf_dirs,
                                                                                            tmp_path, monkeypatch):
    """The plumbing, without building OpenSSL: a two-commit repository that says it is OpenSSL 3.6.3; the builder
    records what it is asked for and refuses, so each commit is recorded as skipped with the request's cases."""
    from sslperf.cli.track import _cases
    from sslperf.errors import BuildFailed
    from sslperf.libs import build as builder
    from sslperf.measure.settings import Settings
    from sslperf.store import Store
    from sslperf.track import tracking

    repo = tmp_path / "repo"
    (repo / "include" / "openssl").mkdir(parents=True)
    for n in (1, 2):
        (repo / "include" / "openssl" / "opensslv.h").write_text(f'# define OPENSSL_VERSION_TEXT "OpenSSL 3.6.3 {n}"\n')
        for git in (["init", "-q"] if n == 1 else [], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                                     "commit", "-q", "-m", f"commit {n}"]):
            if git:
                subprocess.run(["git", "-C", str(repo), *git], check=True, timeout=60)
    asked = []

    def refuse(request, progress=None):
        asked.append(request)
        raise BuildFailed("not built in this test")
    monkeypatch.setattr(builder, "build", refuse)
    cases, options, variants = _cases(tuple(PYTHON_TLS), (), ())
    assert [c.id for c in cases] == [f"exec/{exec_plan.default_name(tuple(PYTHON_TLS))}"] and variants == ("shared",)
    assert options["exec"].command == tuple(PYTHON_TLS)
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    request = tracking.TrackRequest(repo, "HEAD", cases, {"wall": Settings(1, 1)}, 5, 10, 1, options, variants)
    outcomes, left = tracking.track(request, store)
    assert [o.skipped for o in outcomes] == ["not built in this test"] * 2 and left == 0
    assert all(r.variants == ("shared",) for r in asked) and len(asked) == 2
    with pytest.raises(SslperfError):
        _cases(("curl",), ("speed/x",), ())


def test_max_rss_is_the_commands_own_not_the_starters(dirs):
    """The kernel carries the high-water mark of the process a command is started from into the command's: started
    from sslperf's Python (~60 MiB) every run would read at least that. A small Python client reads its own ~20 MiB,
    and one that touches 100 MiB more reads about that much more."""
    rss = {}
    for name, extra in (("small", ""), ("large", "; b = bytearray(100 * 2**20)")):
        result = run_cli("exec", "--lib", "system", "--runs", "2", "--rounds", "1", "--warmup", "0", "--json",
                         "--name", name, "--no-store", "--", "python3", "-c", "import ssl" + extra, timeout=300)
        assert result.returncode == 0, result.stderr
        (m,) = json.loads(result.stdout)["measurements"]
        rss[name] = max(m["figures"][figures.MAX_RSS])
    assert rss["small"] < 45 * 2**20, rss
    assert 90 * 2**20 < rss["large"] - rss["small"] < 130 * 2**20, rss


def _counted(dirs, *command, extra=()):
    result = run_cli("exec", "--lib", "system", "--metric", "instructions", "--runs", "1", "--rounds", "2",
                     "--no-store", "--json", *extra, "--", *command,
                     env={"SSLPERF_DATA_DIR": str(dirs), "SSLPERF_INSTRUCTION_COUNTER": "callgrind"}, timeout=600)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    (m,) = run["measurements"]
    assert m["status"] == "ok" and m["counter"] == "callgrind" and not m["wall_ns"], m
    assert run["settings"]["exec"]["counter"] == "callgrind"
    assert "callgrind" in run["environment"]["instruction_counter"]
    assert run["settings"]["modes"] == ["exec-instructions"]
    schema = json.loads((Path(__file__).parent.parent / "docs" / "reference" / "run.schema.json").read_text())
    assert not [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(run)]
    return m["figures"][figures.INSTRUCTIONS]


@pytest.mark.skipif(not shutil.which("valgrind") or not shutil.which("openssl"), reason="needs valgrind and openssl")
def test_instructions_are_counted_in_every_process_of_a_run_not_timed(dirs, tmp_path):
    small, large = tmp_path / "small", tmp_path / "large"
    small.write_bytes(b"x" * 1024)
    large.write_bytes(b"x" * (4 << 20))
    one = _counted(dirs, "openssl", "dgst", "-sha256", small)
    assert len(one) == 2 and min(one) > 100_000            # a program's start alone is ~10^6 instructions
    # 4 MiB more to hash: at least a third of an instruction per byte more (SHA-256 costs several).
    bigger = _counted(dirs, "openssl", "dgst", "-sha256", large)
    assert min(bigger) - max(one) > (4 << 20) / 3, (one, bigger)
    # A shell that runs the program twice: both children are counted (callgrind follows every exec), and the shell.
    twice = _counted(dirs, "sh", "-c", f"openssl dgst -sha256 {small}; openssl dgst -sha256 {small}")
    assert 1.8 * max(one) < min(twice) < 2.6 * max(one), (one, twice)


def test_counted_runs_are_refused_in_hyperfines_format_and_perf_where_it_cannot_count(dirs, tmp_path):
    both = run_cli("exec", "--lib", "system", "--metric", "instructions", "--export-json", tmp_path / "h.json", "--",
                   "true", env={"SSLPERF_DATA_DIR": str(dirs)}, timeout=120)
    assert both.returncode == 2 and "counts the runs instead of timing them" in both.stderr, both.stderr
    assert runs_stored(dirs) == []
    from sslperf.measure.modes import program_counted
    cannot = program_counted._perf_cannot()
    if cannot is None:
        pytest.skip("perf can count instructions here")
    refused = run_cli("exec", "--lib", "system", "--metric", "instructions", "--", "openssl", "version",
                      env={"SSLPERF_DATA_DIR": str(dirs), "SSLPERF_INSTRUCTION_COUNTER": "perf"}, timeout=120)
    assert refused.returncode == 2 and "perf cannot count here" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr and runs_stored(dirs) == []

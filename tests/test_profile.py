"""`sslperf profile`: the parsers on real `perf report` and `callgrind_annotate`
output (tests/data/profile, see its README), the comparison, the errors, and
end to end on a real 1.1.1w and 3.0 (new SSL_CTX per handshake: the curl
investigation of 3.0's slower new connections)."""

import dataclasses
import gzip
import io
import json
import os
import shutil
import stat

import pytest
from conftest import DATA, run_cli
from rich.console import Console

from sslperf.errors import SslperfError
from sslperf.profiling import diff, parse, record, render
from sslperf.profiling.model import FunctionCost, Profile

RECORDED = DATA / "profile"
OLD, NEW = "openssl-1.1.1w+debug-symbols", "openssl-3.0.8+debug-symbols"
CASE = "tls/handshake/tls1.3/x25519/ecdsa-p256/new"


def recorded(name: str) -> str:
    with gzip.open(RECORDED / f"{name}.gz", "rt") as f:
        return f.read()


def recorded_profile(lib: str, tool: str) -> Profile:
    if tool == "perf":
        functions, total = parse.parse_perf_report(recorded(f"{lib}.perf-report.txt"))
    else:
        functions, total = parse.parse_callgrind_annotate(recorded(f"{lib}.callgrind-self.txt"),
                                                            recorded(f"{lib}.callgrind-inclusive.txt"))
    return Profile(lib, "", CASE, tool, "", total, 10, 1, 1, "", "", "", [], functions)


# ---- names ------------------------------------------------------------------------


@pytest.mark.parametrize("raw, name", [
    ("pthread_rwlock_unlock@@GLIBC_2.34", "pthread_rwlock_unlock"),      # callgrind and perf
    ("cfree@GLIBC_2.2.5", "cfree"),                                      # perf
    ("unlink_chunk.constprop.0", "unlink_chunk"),                        # a GCC clone
    ("asn1_item_embed_d2i'2", "asn1_item_embed_d2i"),                    # callgrind recursion depth
    ("__GI___libc_free (inlined)", "__GI___libc_free"),                  # perf inline frame
    ("ossl_sa_doall_arg", "ossl_sa_doall_arg"),
])
def test_one_name_per_function(raw, name):
    assert parse.function_name(raw) == name


def test_parts_of_one_function_are_merged():
    merged = {f.name: f for f in parse.merge([("free@GLIBC_2.2.5", 2.0, 2.5), ("free", 1.0, 3.0),
                                                ("f", 1.0, 60.0), ("f'2", 4.0, 150.0), ("g'2", 1.0, 120.0),
                                                ("0xffffffffffffffff", 0.0, 98.2)])}
    assert merged["free"].self_share == 3.0 and merged["free"].inclusive_share == 3.0
    # A deeper recursion level counts its callees again: its inclusive share is not used …
    assert merged["f"].self_share == 5.0 and merged["f"].inclusive_share == 60.0
    # … unless there is nothing else, and then never above 100%.
    assert merged["g"].inclusive_share == 100.0
    # perf names a frame it could not unwind by its address: no caller of anything.
    assert merged["0xffffffffffffffff"].inclusive_share == 0.0


# ---- parsers on real output -----------------------------------------------------------


@pytest.mark.parametrize("lib", [OLD, NEW])
def test_perf_report_parsed(lib):
    functions, cpu_ns = parse.parse_perf_report(recorded(f"{lib}.perf-report.txt"))
    by_name = {f.name: f for f in functions}
    assert cpu_ns > 10**9                                  # cpu-clock: about the seconds profiled, in ns
    assert by_name["sslperf_profiled_loop"].inclusive_share > 99       # a few stacks do not unwind
    assert 90 < sum(f.self_share for f in functions) <= 100.5
    assert all(f.inclusive_share >= f.self_share for f in functions)
    assert len(by_name) == len(functions) > 100
    assert not any("@" in f.name or f.name.endswith("(inlined)") for f in functions)


def test_perf_report_of_30_shows_the_method_store():
    new = recorded_profile(NEW, "perf")
    top = [f.name for f in new.top_self(10)]
    assert {"ossl_sa_doall_arg", "ossl_lh_strcasehash", "OPENSSL_LH_retrieve"} & set(top)
    assert new.function("OSSL_DECODER_CTX_new_for_pkey").inclusive_share > 30


@pytest.mark.parametrize("lib", [OLD, NEW])
def test_callgrind_annotate_parsed(lib):
    self_text = recorded(f"{lib}.callgrind-self.txt")
    functions, instructions = parse.parse_callgrind_annotate(self_text, recorded(f"{lib}.callgrind-inclusive.txt"))
    by_name = {f.name: f for f in functions}
    totals = next(line for line in self_text.splitlines() if "PROGRAM TOTALS" in line)
    assert instructions == int(totals.split()[0].replace(",", ""))
    assert by_name["sslperf_profiled_loop"].inclusive_share == 100.0
    assert 99 < sum(f.self_share for f in functions) <= 100.5     # --threshold=99.9
    assert all(f.inclusive_share <= 100.0 for f in functions)       # recursion does not count twice
    assert not any("'" in f.name or ":" in f.name for f in functions)


def test_empty_or_foreign_reports_are_errors():
    with pytest.raises(SslperfError, match="no functions"):
        parse.parse_perf_report("# Samples: 0 of event 'cpu-clock'\n")
    with pytest.raises(SslperfError, match="no instructions"):
        parse.parse_callgrind_annotate("nothing here", "")


# ---- comparing -------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["perf", "callgrind"])
def test_30_and_111_have_different_top_functions(tool):
    old, new = recorded_profile(OLD, tool), recorded_profile(NEW, tool)
    assert {f.name for f in old.top_self(5)}.isdisjoint(
        {"ossl_sa_doall_arg", "ossl_lh_strcasehash", "OPENSSL_LH_retrieve", "ossl_namemap_name2num_n"})
    rising = [c.name for c in diff.changed_most(old, new, 8, "self") if c.self_change > 0]
    assert "ossl_sa_doall_arg" in rising and "ossl_lh_strcasehash" in rising
    for c in diff.changed_most(old, new, 8, "self"):
        assert abs(c.self_change) >= 1.0
    inclusive = {c.name: c for c in diff.changed_most(old, new, 20, "inclusive")}
    decoder = inclusive["OSSL_DECODER_CTX_new_for_pkey"]
    assert decoder.a_inclusive == 0.0 and decoder.b_inclusive > 30


def test_comparison_matches_ex_names_and_folds_call_chains():
    def make(lib, functions):
        return Profile(lib, "", CASE, "callgrind", "instructions", 1000, 10, 1, 1, "", "", "", [],
                               [FunctionCost(*f) for f in functions])

    a = make("a", [("X509_load_cert_crl_file", 0.1, 70.0), ("by_file_ctrl", 0.0, 70.0), ("hot", 10.0, 10.0)])
    b = make("b", [("X509_load_cert_crl_file", 0.0, 90.0), ("X509_load_cert_crl_file_ex", 0.2, 90.0),
                   ("by_file_ctrl_ex", 0.0, 90.0), ("hot", 2.0, 2.0), ("new_thing", 5.0, 40.0)])
    rows = diff.changed_most(a, b, 10, "inclusive")
    chain = next(r for r in rows if r.name.startswith("X509_load_cert_crl_file"))
    assert chain.name == "X509_load_cert_crl_file(_ex)" and chain.same_shares == ("by_file_ctrl(_ex)",)
    assert (chain.a_inclusive, chain.b_inclusive) == (70.0, 90.0)
    assert [r.name for r in rows][:1] == ["new_thing"]
    assert [r.name for r in diff.changed_most(a, b, 1, "self")] == ["hot"]
    summary = diff.comparison(a, b, 5)
    assert summary["cost_ratio"] == 1.0 and summary["changed_most_self"][0]["self_change_pp"] == -8.0


def make_profile(lib, functions):
    return Profile(lib, "", CASE, "callgrind", "instructions", 1000, 10, 1, 1, "", "", "", [],
                   [FunctionCost(*f) for f in functions])


def test_renamed_functions_are_one_row_and_the_lead_names_the_largest_inclusive_change():
    """As perf saw 1.1.1w and 3.0.8 load a CA file: 3.0 renamed X509_STORE_load_locations to
    X509_STORE_load_file_ex (one call chain with X509_load_cert_crl_file(_ex) on each side), and perf lost 1.1.1w's
    SSL_CTX_load_verify_locations (it ends in a tail call): once read as +90 and −73 points, an artefact."""
    a = make_profile("openssl-1.1.1w", [
        ("tls_client_ctx", 0.0, 78.73), ("by_file_ctrl", 0.0, 76.63), ("X509_STORE_load_locations", 0.0, 72.75),
        ("X509_load_cert_crl_file", 0.12, 72.75), ("old_helper", 1.0, 6.0), ("hot", 10.0, 10.0)])
    b = make_profile("openssl-3.0.8", [
        ("tls_client_ctx", 0.0, 90.95), ("SSL_CTX_load_verify_locations", 0.0, 90.07),
        ("X509_STORE_load_file_ex", 0.0, 90.07), ("X509_load_cert_crl_file_ex", 0.12, 90.07),
        ("by_file_ctrl_ex", 0.0, 90.07), ("new_helper", 1.2, 6.3), ("hot", 2.0, 2.0)])
    rows = {r.name: r for r in diff.changed_most(a, b, 20, "inclusive")}
    renamed = rows["X509_STORE_load_file_ex"]
    assert renamed.renamed == ("X509_STORE_load_locations", "X509_STORE_load_file_ex")
    assert (renamed.a_inclusive, renamed.b_inclusive) == (72.75, 90.07)
    assert renamed.same_shares == ("X509_load_cert_crl_file(_ex)",)
    # The frame perf lost joins the chain with its 3.0.8 share that moved least (its caller had at least that share).
    assert rows["by_file_ctrl(_ex)"].same_shares == ("SSL_CTX_load_verify_locations",)
    assert "X509_STORE_load_locations" not in rows and "SSL_CTX_load_verify_locations" not in rows
    assert max(abs(r.inclusive_change) for r in rows.values()) < 20          # no +90 / −73 pair
    # No chain, but close shares on each side (6.0 and 6.3), and nothing else close: one function, renamed.
    assert rows["new_helper"].renamed == ("old_helper", "new_helper")
    assert diff.lead(a, b) == renamed
    line = render.lead_line(a, b)
    assert line == ("X509_STORE_load_file_ex: +17.3 points of inclusive share (openssl-3.0.8 against "
                    "openssl-1.1.1w) (renamed: X509_STORE_load_locations in openssl-1.1.1w, X509_STORE_load_file_ex "
                    "in openssl-3.0.8)")
    assert diff.comparison(a, b, 5)["lead"]["renamed"] == ["X509_STORE_load_locations", "X509_STORE_load_file_ex"]
    shown = Console(file=io.StringIO(), width=300)
    render.print_explanation(a, b, 5, shown)
    assert shown.file.getvalue().splitlines()[0].strip() == line


@pytest.mark.parametrize("tool, lead_function, ops", [
    ("perf", "PEM_X509_INFO_read_bio(_ex)", (971, 202)),        # handshakes in 5 s (tests/data/profile/README.md)
    ("callgrind", "asn1_template_noexp_d2i", (10, 10)),
])
def test_real_profiles_merge_the_ca_file_renaming_and_lead_with_a_function_of_both(tool, lead_function, ops):
    """On the recorded 1.1.1w and 3.0.8 profiles the inclusive changes were topped by `SSL_CTX_load_verify_locations
    (= X509_STORE_load_file_ex) +90` beside `X509_STORE_load_locations −73` (perf; callgrind: the same with
    SSL_CTX_load_verify_file): a rename, and a frame perf lost, read as a new and a gone function."""
    old, new = (dataclasses.replace(recorded_profile(lib, tool), ops=n) for lib, n in zip((OLD, NEW), ops))
    rows = {r.name: r for r in diff.changed_most(old, new, 1000, "inclusive")}
    renamed = rows["X509_STORE_load_file_ex"]
    assert renamed.renamed == ("X509_STORE_load_locations", "X509_STORE_load_file_ex")
    assert 10 < renamed.inclusive_change < 20           # 72.75 → 90.07 (perf), 81.41 → 93.53 (callgrind)
    assert "X509_STORE_load_locations" not in rows and "SSL_CTX_load_verify_file" not in rows
    assert not any(r.name == "SSL_CTX_load_verify_locations" and not r.in_a for r in rows.values())
    first = diff.lead(old, new)
    assert first.name == lead_function and first.in_a and first.in_b and first.inclusive_change > 15
    assert render.lead_line(old, new).startswith(f"{lead_function}: +")


# ---- choosing the tool, and errors -------------------------------------------------------


def fake_tool(directory, name, script):
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_no_profiler_at_all_is_one_paragraph_with_advice(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SslperfError) as err:
        record.choose_tool("auto")
    assert "Neither perf nor valgrind" in err.value.message and "apt-get install valgrind" in err.value.hint


def test_perf_not_permitted(monkeypatch, tmp_path):
    fake_tool(tmp_path, "perf", "echo 'Error: Access to performance monitoring and observability operations is "
                                "limited. Consider adjusting /proc/sys/kernel/perf_event_paranoid setting' >&2\n"
                                "exit 255\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    with pytest.raises(SslperfError) as err:
        record.choose_tool("perf")
    assert "perf_event_paranoid" in err.value.message and "sysctl" in err.value.hint
    if shutil.which("valgrind"):
        tool, why = record.choose_tool("auto")
        assert tool == "callgrind" and "perf_event_paranoid" in why


def test_perf_is_tried_once_per_process_and_again_for_another_perf(monkeypatch, tmp_path):
    """The trial recording takes about a second: a bisect that explains two sides asks twice, and pays once."""
    tried = tmp_path / "tried"
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        fake_tool(tmp_path / name, "perf", f"echo {name} >> {tried}\nexit 0\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'one'}:{os.environ['PATH']}")
    assert record.perf_problem() is None and record.perf_problem() is None
    assert tried.read_text().split() == ["one"]
    monkeypatch.setenv("PATH", f"{tmp_path / 'two'}:{os.environ['PATH']}")
    assert record.perf_problem() is None
    assert tried.read_text().split() == ["one", "two"]


def test_unknown_case_and_library_are_errors_without_traceback(sslperf_dirs):
    bad_case = run_cli("profile", "tls/handshake/tls1.4/x/y/new", "--lib", "system")
    assert bad_case.returncode == 2 and "is not a case sslperf knows" in bad_case.stderr
    bad_lib = run_cli("profile", CASE, "--lib", "openssl-0.9.8zz")
    assert bad_lib.returncode == 2 and "Traceback" not in bad_lib.stderr


# ---- end to end: the curl investigation's new-SSL_CTX handshake on a real 1.1.1w and 3.0 ----------


@pytest.fixture(scope="module")
def built_30(built_fips):
    """OpenSSL 3.0.8: the FIPS tests' build, whose library is 3.0.8's own (its default provider serves)."""
    return built_fips


def profile_json(tmp_path, *args, env):
    result = run_cli("profile", CASE, *args, "--json", "--out", tmp_path, env=env, timeout=1800)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_callgrind_vs_names_different_top_functions(built_openssl, built_30, e2e_env, tmp_path):
    got = profile_json(tmp_path, "--lib", built_openssl, "--vs", built_30, "--tool", "callgrind",
                       "--iterations", "3", env=e2e_env)
    old, new = (Profile.from_dict(p) for p in got["profiles"])
    assert got["tool"] == "callgrind" and old.ops == new.ops == 3
    assert "only the timed loop" in old.scope and "real names" in old.symbols
    # Instructions are counted, not timed: 3.0 does several times the work per handshake here.
    assert new.cost_per_op > 2 * old.cost_per_op
    top_new = [f.name for f in new.top_self(10)]
    assert top_new != [f.name for f in old.top_self(10)]
    method_store = {"ossl_sa_doall_arg", "ossl_lh_strcasehash", "OPENSSL_LH_retrieve", "ossl_namemap_name2num_n",
                    "ossl_lib_ctx_get_data", "OPENSSL_strcasecmp"}
    assert len(method_store & set(top_new)) >= 3
    for name in method_store & set(top_new):
        assert old.function(name) is None or old.function(name).self_share < 0.5
    assert new.function("OSSL_DECODER_CTX_new_for_pkey").inclusive_share > 30
    assert old.function("OSSL_DECODER_CTX_new_for_pkey") is None
    changed = [row["function"] for row in got["comparison"]["changed_most_self"][:6]]
    assert "ossl_sa_doall_arg" in changed
    for p in (old, new):
        assert os.path.getsize(p.raw) > 0 and all(os.path.exists(r) for r in p.reports)
    assert json.loads((tmp_path / "profile.json").read_text())["case"] == CASE
    lacking = run_cli("profile", "kem/ml-kem-768/encaps", "--lib", built_openssl, "--tool", "callgrind",
                      "--out", tmp_path / "na", env=e2e_env)
    assert lacking.returncode == 2 and "is not available on openssl-1.1.1w" in lacking.stderr


@pytest.mark.slow
def test_perf_vs_where_perf_can_record(built_openssl, built_30, e2e_env, tmp_path):
    problem = record.perf_problem()
    if problem:
        pytest.skip(f"perf cannot record here: {problem}")
    got = profile_json(tmp_path, "--lib", built_openssl, "--vs", built_30, "--tool", "perf", "--seconds", "0.5",
                       env=e2e_env)
    old, new = (Profile.from_dict(p) for p in got["profiles"])
    assert got["tool"] == "perf" and old.ops > 0 and new.ops > 0 and old.samples and new.samples
    assert "only the timed loop" in new.scope
    assert new.function("sslperf_profiled_loop").inclusive_share > 99
    assert new.function("OSSL_DECODER_CTX_new_for_pkey").inclusive_share > 30
    assert old.function("OSSL_DECODER_CTX_new_for_pkey") is None
    assert os.path.getsize(new.raw) > 0
    table = run_cli("profile", CASE, "--lib", built_openssl, "--tool", "perf", "--seconds", "0.3", "--top", "5",
                    "--out", tmp_path / "one", env=e2e_env)
    assert table.returncode == 0, table.stderr
    assert "Top 5 functions by self cost" in table.stdout and "profiling with perf" in table.stderr


def test_only_in_is_never_claimed_for_a_frame_around_work_both_sides_do(tmp_path):
    """Issue 50 item 5: the lead line said "only in openssl-3.0.8: SSL_CTX_load_verify_locations 92.3%" while
    1.1.1w spent 79.8% in X509_STORE_load_locations, the same CA load: perf had lost 1.1.1w's frame (a tail call),
    and 3.0.8's is a frame around a function both profiles have (here by_file_ctrl(_ex), 91.8% on its side: the
    shares of one chain differ by what perf's samples lose, so the frame is not folded into the chain)."""
    a = make_profile("openssl-1.1.1w", [("by_file_ctrl", 0.0, 79.8), ("X509_STORE_load_locations", 0.0, 79.8),
                                        ("hot", 12.0, 12.0)])
    b = make_profile("openssl-3.0.8", [("SSL_CTX_load_verify_locations", 0.0, 92.3), ("by_file_ctrl_ex", 0.0, 91.8),
                                       ("X509_STORE_load_file_ex", 0.0, 91.8), ("hot", 3.0, 3.0)])
    b.total = 2000       # dearer per operation: its one-sided functions are the candidates
    assert "only in" not in render.lead_line(a, b)
    # A function the other side's report names below the parsed shares is not "only in" either.
    lone = make_profile("openssl-3.0.8", [("new_cache_fill", 30.0, 30.0), ("grown", 5.0, 45.0)])
    lone.total = 2000
    plain = make_profile("openssl-1.1.1w", [("grown", 5.0, 25.0)])
    assert "only in openssl-3.0.8: new_cache_fill at 30.0%" in render.lead_line(plain, lone)
    report = tmp_path / "report.txt"
    report.write_text("     0.01%  0.01%  harness  libcrypto.so  [.] ossl_new_cache_fill\n")
    plain.reports = [str(report)]
    assert "only in" not in render.lead_line(plain, lone)

"""The case catalog is the harness's: every case id the full `speed`, `api`
and `tls` suites name is prepared by the real harness on real libraries —
the system OpenSSL, a built 1.1.1w and a built 3.6 — and is either ready or
n/a with a reason, never unknown to the harness nor an error."""

import pytest

from sslperf.libs import installed
from sslperf.cases import catalog
from sslperf.measure import catalog_build, suites
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import Worker


def every_case_id() -> list[str]:
    cases = suites.suite("full", workloads=("record", "speed-compat")) + suites.api_cases() + suites.tls_suite("full")
    cases += suites.transfer_suite("full")
    cases += [suites.tls_resume(p, h, g, c) for p in ("tls1.3", "tls1.2") for h in ("ticket", "session-id")
              for g in ("x25519",) for c in ("ecdsa-p256",)]
    return list(dict.fromkeys(c.id for c in cases))


def prepare_all(lib) -> dict[str, dict]:
    answers = {}
    with made_by(lib) as cert_dir, Worker(lib, {"SSLPERF_CERT_DIR": str(cert_dir)}) as worker:
        for case_id in every_case_id():
            answers[case_id] = worker.request(f"prepare {case_id}", timeout=120).data
            worker.request(f"release {case_id}", timeout=60)
    return answers


def check(answers: dict[str, dict]) -> set[str]:
    bad = {case: a for case, a in answers.items() if a["type"] not in ("prepared", "na") or
           (a["type"] == "na" and not a.get("reason"))}
    assert not bad, bad
    return {case for case, a in answers.items() if a["type"] == "prepared"}


def test_the_packaged_catalog_is_what_the_harness_tables_print():
    """The catalog is data (sslperf/cases/catalog.json) so that a case id parses without a compiler; this is where
    it is held to the C tables: a table edited without `python -m sslperf.measure.catalog_build` fails here."""
    listed = catalog_build.from_harness()
    assert catalog.load() == listed, "catalog.json is stale: run `python -m sslperf.measure.catalog_build`"
    assert catalog.PATH.read_text() == catalog_build.text(listed)
    assert {"cipher", "digest", "api", "tls", "threads"} <= set(listed)


def test_a_case_id_parses_with_no_harness_at_hand(tmp_path):
    """Parsing needs only the package: a Python with no compiler on its PATH and an empty cache parses and makes
    ids (a child process, so that no catalog read earlier in this one helps)."""
    import subprocess
    import sys

    code = ("from sslperf.cases import ids; c = ids.parse('tls/handshake/tls1.3/x25519mlkem768/ml-dsa-65/shared'); "
            "print(c.family, c.part('group'), c.group, ids.make('cipher', algorithm='aes-128-gcm', "
            "operation='encrypt', size=16).id)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PATH": str(tmp_path), "SSLPERF_CACHE_DIR": str(tmp_path / "cache"),
                              "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == ["tls", "x25519mlkem768"] and "cipher/aes-128-gcm/encrypt/16" in out.stdout


def test_the_suites_name_every_algorithm_of_the_catalog():
    ids = set(every_case_id())
    for family in ("cipher", "digest", "mac", "sig", "kex", "kem", "keygen"):
        for name in catalog.names(family):
            if family == "keygen" and name in catalog.names("kem"):
                continue              # measured as kem/NAME/keygen
            assert any(i.startswith(f"{family}/{name}/") or i == f"{family}/{name}" for i in ids), (family, name)
    assert {e["id"] for e in catalog.api_cases()} <= ids


def test_every_case_prepares_on_the_system_library(sslperf_dirs):
    ready = check(prepare_all(installed.find("system")))
    assert "cipher/aes-128-gcm/encrypt/16" in ready and "tls/handshake/tls1.3/x25519/rsa-2048/new" in ready


@pytest.mark.slow
def test_every_case_prepares_on_built_111_and_3x(built_openssl, built_openssl3, in_e2e_cache):
    old = check(prepare_all(installed.find(built_openssl)))
    answers = prepare_all(installed.find(built_openssl3))
    new = check(answers)
    # 1.1.1 has neither the post-quantum algorithms nor the hybrid group; 3.6 has both.
    for case in ("kem/ml-kem-768/encaps", "sig/ml-dsa-65/sign", "tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared"):
        assert case not in old and case in new, case
    assert len(new) > len(old)
    # The hybrid group is not only offered but negotiated: the library names it after the first handshake.
    hybrid = answers["tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared"]
    assert "group X25519MLKEM768" in hybrid["checked"], hybrid

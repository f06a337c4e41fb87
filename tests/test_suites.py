import pytest

from sslperf.errors import SslperfError
from sslperf.measure import suites


def test_every_case_of_every_suite_parses_back():
    for depth in suites.DEPTHS:
        for case in suites.suite(depth, (1350,), ("record", "speed-compat")):
            assert suites.parse_case(case.id) == case


def test_quick_suite_answers_the_seed_questions():
    ids = {c.id for c in suites.suite("quick")}
    for aead in ("aes-128-gcm", "aes-128-ccm", "aes-128-ocb", "chacha20-poly1305"):      # seed 000's AEAD table
        assert f"cipher/{aead}/encrypt/16384" in ids
    assert "cipher/aes-128-gcm/encrypt/1350" in ids                                    # a TLS record (seed 002)
    for aead in ("aes-128-gcm", "chacha20-poly1305"):                                   # a curve, not three points
        assert len({c.size for c in suites.suite("quick") if c.algorithm == aead and c.operation == "encrypt"}) == 5
    assert {"sig/ecdsa-p256/sign", "sig/rsa-2048/sign", "sig/ed25519/sign", "kex/x25519/derive",
            "kex/ecdh-p256/derive"} <= ids


def test_sizes_add_to_the_defaults_and_workloads_double_encryption():
    default = suites.suite("default", (4096,), ("record", "speed-compat"))
    ids = {c.id for c in default}
    assert "cipher/aes-256-ocb/decrypt/4096" in ids and "digest/sha256/16/speed-compat" in ids
    assert "cipher/aes-128-gcm/decrypt/16/speed-compat" not in ids      # openssl speed's default encrypts


@pytest.mark.parametrize("bad", ["cipher/aes-128-gcm/encrypt/0", "cipher/aes-128-gcm/crypt/16", "digest/md5/16",
                                 "sig/x25519/sign", "kem/ml-kem-768/sign", "foo"])
def test_bad_case_names(bad):
    with pytest.raises(SslperfError, match="is not a case sslperf knows"):
        suites.parse_case(bad)


def test_select_by_glob_and_substring():
    cases = suites.suite("quick")
    assert {c.algorithm for c in suites.select(cases, ("cipher/aes-*-gcm/*",))} == {"aes-128-gcm", "aes-256-gcm"}
    assert [c.id for c in suites.select(cases, ("x25519",))] == ["kex/x25519/derive"]

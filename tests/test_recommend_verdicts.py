"""`recommend` asks the one verdict rule for every order between two measured options: ties are marked, explained
and ordered by a stated rule; argued ratios carry their CI; noisy evidence is warned of. Measurements here are
synthetic (as a run records them: five worker processes, two samples each, every sample marked with its process)
so that the verdicts are known; the real recommend is tested in test_recommend.py."""

import re

from sslperf import figures
from sslperf.measure import suites
from sslperf.recommend import decide
from sslperf.recommend.snippets import as_dict, text
from sslperf.results import Measurement

LIB = "openssl-test"
PIDS = [101, 101, 102, 102, 103, 103, 104, 104, 105, 105]       # one worker per pass, the same for every case
QUIET = [1.0, 1.002, 0.998, 1.001, 0.999, 1.0, 1.003, 0.997, 1.001, 0.999]
# ±30% either way, and so for another figure of the same processes: their ratio swings around 1 in every process.
NOISY = [1.0, 1.3, 0.8, 1.1, 0.7, 1.25, 0.95, 1.05, 0.75, 1.3]
NOISY_OTHER = [1.2, 0.8, 1.1, 0.75, 1.3, 0.9, 1.08, 0.7, 1.25, 1.05]
RECORD = f"/encrypt/{decide.TLS_RECORD}"
AES128, AES256, CHACHA = (f"cipher/{name}{RECORD}" for name in ("aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"))


def result(case_id: str, micros: float, jitter=QUIET, **side_micros):
    """A result of `case_id` costing `micros` µs per operation, sample by sample scaled by `jitter`."""
    case, ops = suites.parse_case(case_id), 100
    bytes_per_op = case.size if case.family == "cipher" else 0
    wall = [int(micros * 1000 * ops * j) for j in jitter]
    m = Measurement.of(case, LIB, unit="bytes" if bytes_per_op else "ops", bytes_per_op=bytes_per_op, ops=[ops] * len(jitter),
                    wall_ns=wall, cpu_ns=wall)
    m.figures = {figures.PROCESS: PIDS[:len(jitter)],
                 **{figures.CLIENT_CPU if side == "client" else figures.SERVER_CPU:
                    [int(us * 1000 * ops * j) for j in jitter] for side, us in side_micros.items()}}
    return m


def quiet(shift: int) -> list[float]:
    """QUIET, shifted: each case its own small wobble, so ratios between cases vary a little from process to process."""
    return QUIET[shift % len(QUIET):] + QUIET[:shift % len(QUIET)]


def evidence(changed: dict | None = None, noise: dict | None = None) -> decide.Evidence:
    """Every case the advice needs, measured in one run; `changed`: case → result to use instead."""
    costs = {AES128: 0.40, AES256: 0.52, CHACHA: 0.95, "keygen/x25519": 40.0, "kex/x25519/derive": 45.0,
             "keygen/ecdh-p256": 20.0, "kex/ecdh-p256/derive": 60.0, "keygen/ecdh-p384": 300.0,
             "kex/ecdh-p384/derive": 700.0, "keygen/x448": 150.0, "kex/x448/derive": 160.0,
             "keygen/ecdh-p521": 900.0, "kex/ecdh-p521/derive": 1800.0, "keygen/ffdh-2048": 9000.0,
             "kex/ffdh-2048/derive": 4000.0, "kem/ml-kem-768/encaps": 30.0, "kem/ml-kem-1024/encaps": 50.0,
             "sig/ecdsa-p256/sign": 20.0, "sig/ecdsa-p256/verify": 60.0, "sig/ecdsa-p384/sign": 600.0,
             "sig/ecdsa-p384/verify": 500.0, "sig/ecdsa-p521/sign": 1500.0, "sig/ecdsa-p521/verify": 1300.0,
             "sig/rsa-2048/sign": 800.0, "sig/rsa-2048/verify": 20.0, "sig/rsa-3072/sign": 1200.0,
             "sig/rsa-3072/verify": 40.0, "sig/rsa-4096/sign": 5000.0, "sig/rsa-4096/verify": 80.0}
    plain = {case: result(case, us, quiet(i)) for i, (case, us) in enumerate(costs.items())}
    plain[decide.TLS_FULL] = result(decide.TLS_FULL, 900.0, quiet(1), client=400.0, server=450.0)
    plain[decide.TLS_NEW_CTX] = result(decide.TLS_NEW_CTX, 3000.0, quiet(2), client=2500.0, server=450.0)
    plain[decide.TLS_RESUMED] = result(decide.TLS_RESUMED, 300.0, quiet(3), client=120.0, server=110.0)
    plain.update(changed or {})
    masked = [result(AES128, 2.0, quiet(4)), result(AES256, 2.6, quiet(5)), result(CHACHA, 1.0, quiet(6))]
    runs = {case: "run-1" for case in plain} | {f"{m.case}@masked": "run-2" for m in masked}
    return decide.Evidence(list(plain.values()), masked, ["run-1", "run-2"], runs, noise or {})


def point(advice, topic: str):
    return next(p for p in advice.points if p.topic == topic)


def test_two_aeads_that_tie_are_marked_and_explained_and_ordered_by_security_margin():
    # The same cost with ±30% spread, measured in the same worker processes: AES-128-GCM's median is the lower
    # one (a silent sort by medians put it first), yet the rule does not tell the two apart.
    tie = {AES128: result(AES128, 0.47, NOISY), AES256: result(AES256, 0.47, NOISY_OTHER)}
    assert tie[AES128].micros_per_op() < tie[AES256].micros_per_op()
    advice = decide.decide(evidence(tie), LIB, "openssl", "OpenSSL test", clients="desktop")
    record = point(advice, "record cipher")
    assert [a.name for a in advice.aeads][:2] == ["aes-256-gcm", "aes-128-gcm"]
    assert "Order: AES-256-GCM ~ AES-128-GCM, ChaCha20-Poly1305" in record.decision
    assert "tied with AES-128-GCM as the cheapest" in record.decision
    said = [line for line in record.because if line.startswith("AES-256-GCM and AES-128-GCM tie")]
    assert said and re.search(r"tie \(within noise, p=0\.\d\d\): ordered by security margin", said[0]), said
    [found] = as_dict(advice, evidence(tie))["points"][0]["ties"]
    assert (found["first"], found["second"], found["verdict"], found["method"]) == \
        ("AES-256-GCM", "AES-128-GCM", "~", "paired")        # the same processes: paired by process
    assert "AES-256-GCM ~ AES-128-GCM" in text(advice)


def test_groups_that_tie_follow_the_stated_preference_not_the_lower_median():
    """P-256 at 97.6 µs and X25519 at 103.5 µs, both ±30%: a tie, so X25519 (the group clients offer first)."""
    tie = {"keygen/ecdh-p256": result("keygen/ecdh-p256", 37.6, NOISY),
           "kex/ecdh-p256/derive": result("kex/ecdh-p256/derive", 60.0, NOISY),
           "keygen/x25519": result("keygen/x25519", 43.5, NOISY_OTHER),
           "kex/x25519/derive": result("kex/x25519/derive", 60.0, NOISY_OTHER)}
    advice = decide.decide(evidence(tie), LIB, "openssl", "OpenSSL test")
    groups = point(advice, "key exchange groups")
    assert [g.tls_name for g in advice.groups][:3] == ["X25519MLKEM768", "X25519", "P-256"]
    assert "X25519 ~ P-256" in groups.decision
    assert any(re.match(r"X25519 and P-256 tie \(within noise, p=0\.\d\d\): ordered by the usual preference "
                        r"\(X25519 before P-256", line) for line in groups.because), groups.because


def test_options_that_differ_significantly_follow_the_verdict_and_ratios_carry_their_ci():
    advice = decide.decide(evidence(), LIB, "openssl", "OpenSSL test", clients="desktop")
    record = point(advice, "record cipher")
    assert [a.name for a in advice.aeads] == ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"]
    # ChaCha20 0.95 µs against AES-128-GCM's 0.40 µs: 2.4× with its interval, so two runs' figures can be set side
    # by side; and the ChaCha20 win without AES instructions (1.0 against 2.0 µs) with its own.
    assert re.search(r"serving ChaCha20 costs this server 2\.4× \[2\.\d, 2\.\d\] the per-record CPU of AES-128-GCM",
                     " ".join(record.because)), record.because
    assert re.search(r"ChaCha20 is 2\.0× cheaper there \[\d\.\d+, \d\.\d+\]", " ".join(record.because))
    assert not record.ties and " ~ " not in record.decision
    assert "AES-128-GCM first: the cheapest for this server" in record.decision
    cert = point(advice, "certificate")
    assert re.search(r"ECDSA P-256 signs 60× cheaper \[\d+, \d+\] than RSA-3072", " ".join(cert.because)), cert.because
    groups = point(advice, "key exchange groups")
    assert [g.tls_name for g in advice.groups][1:3] == ["P-256", "X25519"]      # 80 µs against 85 µs, ±0.3%
    assert not groups.ties
    assert re.search(r"ffdhe2048 would cost 13\.00 ms per handshake, 16[23]× P-256 \[\d+, \d+\]",
                     " ".join(groups.because)), groups.because
    assert re.search(r"\(76% less \[7\d, 7\d\]\)", " ".join(point(advice, "session resumption").because))
    assert not advice.warnings


def test_noisy_evidence_is_warned_of_naming_the_figures_and_the_runs_noise():
    noisy = {AES128: result(AES128, 0.47, NOISY), AES256: result(AES256, 0.47, NOISY_OTHER)}
    advice = decide.decide(evidence(noisy), LIB, "openssl", "OpenSSL test")
    [warning] = advice.warnings
    assert warning.startswith("warning: the evidence is noisy — 2 figure(s) have a 95% CI wider than ±5%")
    assert f"{AES128} ±" in warning and f"{AES256} ±" in warning
    assert "--fresh" in warning
    assert text(advice).splitlines()[1].startswith("warning: the evidence is noisy")     # said before the points
    busy = {"run-1": {"flags": ["CPU 1 100% busy"], "spread": 0.31}}
    recorded = decide.decide(evidence(noise=busy), LIB, "openssl", "OpenSSL test")
    assert recorded.warnings == ["warning: the evidence is noisy — run run-1 recorded: CPU 1 100% busy. Choices "
                                 "the noise leaves open are called ties and ordered by the rule stated; measure "
                                 "again on a quiet machine (--fresh) for a sharper answer."]
    assert as_dict(recorded, evidence(noise=busy))["warnings"] == recorded.warnings

"""The report's answer and its figures, on runs of known data (no measuring): versions.png drawn from the one
verdict rule (the same verdicts, CIs and p as `compare`, the cases chosen by a stated rule, a step without a
test drawn as none), first places that never count a tie, and colours a colour-blind reader can tell apart."""

import re
from importlib import resources

import pytest

from sslperf.compare import Column, compare
from sslperf.report import figures, ranking, run_page, versions_figure
from sslperf.plotting import palette
from sslperf.results import LibInfo, Measurement, Run
from sslperf.userfiles import Batch

# Five worker processes of four rounds; within a process the samples agree to 0.1%, between processes the
# level moves by a few percent (what processes do). Every library is measured by the same processes.
LEVELS = [1000, 1030, 985, 1040, 1010]
JITTER = [0, 1, -1, 0]
STEADY = [[level + j for j in JITTER] for level in LEVELS]
SHUFFLED = [[level + j for j in JITTER] for level in reversed(LEVELS)]       # A/A against STEADY: a tie
X25519, ECDSA = "kex/x25519/derive", "sig/ecdsa-p256/sign"


def scaled(processes, factor):
    return [[factor * r for r in process] for process in processes]


def measurement(case: str, lib: str, processes: list[list[float]]) -> Measurement:
    family, algorithm, operation = case.split("/")
    rates = [r for process in processes for r in process]
    pids = [1000 + p for p, process in enumerate(processes) for _ in process]
    group = "key exchange" if family == "kex" else "signatures"
    return Measurement(case, family, group, algorithm, operation, None, "record", lib, "ok", None, "ops", 0,
                       [int(r) for r in rates], [1_000_000_000] * len(rates), [1_000_000_000] * len(rates),
                       figures={"process": pids})


def run_of(libs: dict[str, tuple[str, dict[str, list[list[float]]]]]) -> Run:
    """One interleaved run: libs[name] = (version, {case: processes})."""
    run = Run.new({}, {})
    run.libs = [LibInfo(name, "openssl", version, f"OpenSSL {version}", "default", "built")
                for name, (version, _) in libs.items()]
    run.measurements = [measurement(case, name, processes) for name, (_, cases) in libs.items()
                        for case, processes in cases.items()]
    return run


def four_versions() -> Run:
    """x25519 15% slower from 1.0.0 to 2.0.0, a tie from 2.0.0 to 3.0.0; ECDSA a tie throughout;
    4.0.0 has two samples of one process, too few to test."""
    return run_of({
        "openssl-1.0.0": ("1.0.0", {X25519: STEADY, ECDSA: STEADY}),
        "openssl-2.0.0": ("2.0.0", {X25519: scaled(STEADY, 0.85), ECDSA: SHUFFLED}),
        "openssl-3.0.0": ("3.0.0", {X25519: scaled(SHUFFLED, 0.85), ECDSA: STEADY}),
        "openssl-4.0.0": ("4.0.0", {X25519: [[900, 901]], ECDSA: [[1000, 1001]]}),
    })


def test_the_version_figure_draws_compares_verdicts_with_their_ci_and_the_tie_as_a_tie():
    run = four_versions()
    found = versions_figure.version_changes(run)
    libs = ["openssl-1.0.0", "openssl-2.0.0", "openssl-3.0.0", "openssl-4.0.0"]
    assert found.steps == list(zip(libs, libs[1:]))
    # The rule, said: the largest significant changes; ECDSA, a tie in every step, is left out.
    assert found.cases == [X25519]
    assert "largest significant change" in found.rule and "ties in every step left out" in found.rule
    bars = {bar.step: bar for bar in found.bars if bar.case == X25519}
    for step in found.steps[:2]:                # each bar is compare's verdict on that step, with its CI and p
        change = compare([Column(lib, run.id, lib) for lib in step], {run.id: run}).rows[0].changes[1]
        bar = bars[step]
        assert bar.drawn and bar.verdict == change.verdict
        assert bar.percent == pytest.approx(change.percent) and bar.p == change.p
        assert bar.low == pytest.approx((change.low - 1) * 100) and bar.high == pytest.approx((change.high - 1) * 100)
        assert bar.low <= bar.percent <= bar.high
    assert bars[found.steps[0]].verdict == "slower" and bars[found.steps[0]].high < -10
    tie = bars[found.steps[1]]
    assert tie.verdict == "~" and tie.low < 0 < tie.high                     # drawn, marked a tie, its CI spans 0
    # A step that cannot be tested draws no bar, and says why.
    untested = bars[found.steps[2]]
    assert untested.verdict == "?" and not untested.drawn
    assert "fewer than 3 samples or worker processes" in untested.why
    assert found.untested == {found.steps[2]: "no test: fewer than 3 samples or worker processes"}


def test_the_version_figure_is_written_and_leaves_out_what_is_no_version_step(tmp_path):
    batch = Batch(tmp_path)
    drawn = versions_figure.draw(four_versions(), batch, ("png",))
    assert [f.name for f in drawn] == ["versions"] and batch.files["versions.png"][:8] == b"\x89PNG\r\n\x1a\n"
    # Two builds of one version (a variant, a CPU mask) are not a version step: no figure.
    same = run_of({"a": ("3.0.0", {X25519: STEADY}), "b": ("3.0.0", {X25519: scaled(STEADY, 0.5)})})
    assert versions_figure.version_changes(same) is None and versions_figure.draw(same, batch, ("png",)) == []


def test_a_tie_at_the_top_is_no_first_place_for_anyone(tmp_path):
    # a and b are within noise of each other (A/A), both clearly ahead of c.
    run = run_of({"a": ("1", {X25519: STEADY}), "b": ("1", {X25519: SHUFFLED}),
                  "c": ("1", {X25519: scaled(STEADY, 0.5)})})
    group = ranking.rank_run(run)[0]
    assert sorted(group.cases[0].places[0]) == ["a", "b"]
    assert group.firsts() == {} and group.shared_firsts() == 1
    clear = run_of({"a": ("1", {X25519: STEADY}), "c": ("1", {X25519: scaled(STEADY, 0.5)})})
    assert ranking.rank_run(clear)[0].firsts() == {"a": 1}
    html = run_page.render(run, [], tmp_path)
    assert "Clear first places: none; shared (a tie at the top) in 1 case." in html


# ---- colours ----------------------------------------------------------------------------------------

# Machado, Oliveira and Fernandes (2009), full severity, on linear RGB.
DEFICIENCIES = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def seen_as(colour: str, deficiency: str) -> list[float]:
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    def encoded(c):
        c = min(1.0, max(0.0, c))
        return 255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)

    rgb = [linear(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5)]
    matrix = DEFICIENCIES[deficiency]
    return [encoded(sum(matrix[r][c] * rgb[c] for c in range(3))) for r in range(3)]


def apart(a: str, b: str, deficiency: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(seen_as(a, deficiency), seen_as(b, deficiency))) ** 0.5


def test_the_palette_is_okabe_ito_and_its_verdicts_stay_apart_for_colour_blind_readers():
    assert palette.SERIES == ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
    assert (palette.FASTER, palette.SLOWER, palette.TIE) == ("#0072B2", "#D55E00", "#999999")
    # The check can fail: matplotlib's red and green (the report's old series) and the page's old verdict
    # colours merge for a deuteranope.
    assert apart("#d62728", "#2ca02c", "deuteranopia") < 40 and apart("#cf222e", "#1a7f37", "deuteranopia") < 40
    for deficiency in DEFICIENCIES:
        for a, b in ((palette.FASTER, palette.SLOWER), (palette.FASTER, palette.TIE), (palette.SLOWER, palette.TIE)):
            assert apart(a, b, deficiency) > 80, (deficiency, a, b)
    for deficiency in ("protanopia", "deuteranopia"):       # the common ones: the first four series apart
        firsts = palette.SERIES[:4]                          # (Okabe–Ito's closest pair, blue and purple: 51)
        assert min(apart(a, b, deficiency) for i, a in enumerate(firsts) for b in firsts[i + 1:]) > 45
    assert not {"#ff0000", "#00ff00", "#d62728", "#2ca02c"} & {c.lower() for c in palette.SERIES}


def test_the_charts_and_figures_draw_with_the_palette(tmp_path):
    # The page's script takes its colours from the page's data; the only colours written in it are greys.
    script = resources.files("sslperf.report").joinpath("dashboard.js").read_text()
    for literal in re.findall(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b", script):
        digits = literal[1:] if len(literal) == 7 else "".join(c * 2 for c in literal[1:])
        assert digits[0:2] == digits[2:4] == digits[4:6], literal
    run = run_of({"a": ("1", {X25519: STEADY, ECDSA: STEADY}), "b": ("2", {X25519: SHUFFLED, ECDSA: STEADY}),
                  "c": ("3", {X25519: scaled(STEADY, 0.8), ECDSA: scaled(STEADY, 1.3)})})
    html = run_page.render(run, [], tmp_path)
    assert '"palette": {"series": ["#0072B2", "#E69F00", "#009E73"' in html
    # The matplotlib figures: every colour drawn is the palette's, or a grey.
    batch = Batch(tmp_path)
    drawn = figures.all_figures(run, batch, ("svg",))
    assert {f.name for f in drawn} >= {"ops-key-exchange", "ops-signatures", "versions"}
    allowed = {c.lower() for c in palette.SERIES} | {palette.TIE.lower()}
    for name, data in batch.files.items():
        colours = {c.lower() for c in re.findall(r"(?:fill|stroke): ?(#[0-9a-fA-F]{6})", data.decode())}
        coloured = {c for c in colours if not c[1:3] == c[3:5] == c[5:7]}
        assert coloured and coloured <= allowed, (name, coloured - allowed)

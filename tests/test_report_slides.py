"""A chart for a slide (issue 50 item 6): the per-case bars carry the verdict marks of the terminal table
(`report --case/--filter/--lib` on real runs: tests/test_report.py)."""

from sslperf import figures as named
from sslperf.report import figures
from sslperf.results import LibInfo, Measurement, Run
from sslperf.userfiles import Batch


def signature(lib: str, case: str, micros: float, seed: int) -> Measurement:
    """5 processes × 4 samples of `micros` µs per signature (each off by under 1%)."""
    n = 20
    ns = [round(micros * 1000 * 100 * (1 + ((i * 7 + seed) % 9) / 1000)) for i in range(n)]
    m = Measurement(case, "sig", "signatures", case.split("/")[1], "sign", None, "record", lib, "ok", None, "ops", 0,
                    [100] * n, ns, ns)
    m.figures = {named.PROCESS: [i // 4 for i in range(n)]}
    return m


def test_each_bar_carries_the_tables_verdict_mark(monkeypatch, tmp_path):
    run = Run.new({}, {})
    run.libs = [LibInfo(name, "openssl", "1", name, "default", "built") for name in ("old", "new")]
    run.measurements = [signature("old", "sig/ecdsa-p256/sign", 20, 1), signature("new", "sig/ecdsa-p256/sign", 10, 2),
                        signature("old", "sig/ed25519/sign", 30, 3), signature("new", "sig/ed25519/sign", 30, 4)]
    drawn = []
    monkeypatch.setattr(figures, "save", lambda fig, files, name, formats: drawn.append(fig) or [])
    figures.operations_bars(run, Batch(tmp_path, False), ("png",))
    [fig] = drawn
    marks = {ax.get_title(): [t.get_text() for t in ax.texts] for ax in fig.axes if ax.get_title()}
    assert marks["ecdsa-p256 sign"] == ["▲ +100%"] and marks["ed25519 sign"][0].startswith("~"), marks
    assert "the change against old by the verdict rule" in fig._suptitle.get_text()

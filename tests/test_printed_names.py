"""Names and paths that look like rich markup (`[/x]`, `[bold]`) are printed
as they are, by the real command: a library version read from a real
wolfCrypt benchmark's banner, a --lib-name, the runs compare and `runs rm`
name, and output paths. None of them may end the command (a MarkupError is
exit 70) or lose the second file of an import."""

import json
import re
from pathlib import Path

from conftest import run_cli

DATA = Path(__file__).parent / "data" / "speed"


def ok(result):
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_markup_in_names_and_paths_is_printed_as_it_is(sslperf_dirs, tmp_path):
    # a real capture whose version line says `5.9.4[/x]`, and a second real capture on the same command line
    banner = tmp_path / "wolfcrypt-markup.txt"
    banner.write_text((DATA / "wolfcrypt-5.9.4-text.txt").read_text().replace("wolfSSL version 5.9.4",
                                                                               "wolfSSL version 5.9.4[/x]"))
    imported = ok(run_cli("import", banner, DATA / "wolfcrypt-5.9.4-text-base10-64.txt"))
    assert "29 results for wolfssl-5.9.4[/x] as run" in imported
    assert "13 results for wolfssl-5.9.4 as run" in imported          # the second file is imported too
    named = ok(run_cli("import", "--lib-name", "y[/i][bold]", DATA / "openssl-3.6.3-text-rsa.txt"))
    assert "results for y[/i][bold] as run" in named

    runs = {lib: row["id"] for row in json.loads(ok(run_cli("runs", "list", "--json"))) for lib in row["libs"]}
    assert sorted(runs) == ["wolfssl-5.9.4", "wolfssl-5.9.4[/x]", "y[/i][bold]"]
    wolf, openssl = runs["wolfssl-5.9.4[/x]"], runs["y[/i][bold]"]
    assert "wolfssl-5.9.4[/x]" in ok(run_cli("runs", "list"))
    shown = ok(run_cli("runs", "show", openssl))
    assert "y[/i][bold]: OpenSSL 3.6.3" in shown and re.search(r"y\[/i\]\[bold\] +┃", shown)
    assert "wolfssl-5.9.4[/x]" in ok(run_cli("runs", "show", wolf))

    compared = ok(run_cli("compare", wolf, openssl))
    assert "change vs wolfssl-5.9.4[/x]" in compared and "y[/i][bold]" in compared

    out = tmp_path / "a[/b]" / "[bold]report"
    out.parent.mkdir(parents=True)
    reported = ok(run_cli("report", openssl, "--format", "html", "--out", out))
    assert f"wrote {out / 'report.html'}" in reported
    assert "y[/i][bold]" in (out / "report.html").read_text()
    exported = ok(run_cli("runs", "export", openssl, "--format", "csv", "--out", tmp_path / "a[/b]" / "r.csv"))
    assert f"wrote {tmp_path / 'a[/b]' / 'r.csv'}" in exported

    removed = ok(run_cli("runs", "rm", openssl))
    assert f"deleted {openssl} (" in removed and ", y[/i][bold], 10 results)" in removed
    assert {row["id"] for row in json.loads(ok(run_cli("runs", "list", "--json")))} == {runs["wolfssl-5.9.4"], wolf}

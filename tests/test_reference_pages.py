"""The reference pages hold what the code does: every `SSLPERF_*` variable the code reads or sets is on the
environment page, every exit status the code uses is in the exit codes' table, every template of the case catalog
is on the case ids page, and every example id there is one sslperf accepts."""

import re
from pathlib import Path

import pytest

from sslperf.cases import ids
from sslperf.measure import suites

ROOT = Path(__file__).parent.parent
REFERENCE = ROOT / "docs" / "reference"
VARIABLE = re.compile(r"\bSSLPERF_[A-Z0-9_]*[A-Z0-9]\b")


def variables_used() -> dict[str, str]:
    """Each SSLPERF_* name in src/, scripts/ and tests/conftest.py, with a file that names it."""
    found = {}
    files = [p for p in (ROOT / "src").rglob("*") if p.is_file() and p.suffix in (".py", ".c", ".h", ".sh", ".pl")]
    files += [p for p in (ROOT / "scripts").iterdir() if p.is_file()] + [ROOT / "tests" / "conftest.py"]
    for path in files:
        text = path.read_text(errors="replace")
        # In C only what a string names (getenv("SSLPERF_…")): the headers' include guards are SSLPERF_*_H too.
        names = re.findall(r'"(SSLPERF_[A-Z0-9_]*[A-Z0-9])"', text) if path.suffix in (".c", ".h") else \
            VARIABLE.findall(text)
        for name in names:
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def missing_variables(page: str, used: dict[str, str]) -> dict[str, str]:
    return {name: where for name, where in used.items() if f"`{name}`" not in page}


def test_every_variable_the_code_reads_or_sets_is_on_the_environment_page():
    page = (REFERENCE / "environment.md").read_text()
    used = variables_used()
    assert "SSLPERF_DB" in used and "SSLPERF_PROBE_EMULATOR" in used       # the scan finds them at all
    missing = missing_variables(page, used)
    assert not missing, f"not on docs/reference/environment.md: {missing}"


def test_a_variable_missing_from_the_page_is_named_with_its_file():
    page = (REFERENCE / "environment.md").read_text().replace("`SSLPERF_PROBE_RUNNER`", "`SSLPERF_PROBE_RUNNR`")
    assert missing_variables(page, variables_used()) == {"SSLPERF_PROBE_RUNNER": "src/sslperf/probe/windows.py"}


EXIT_FILES = ("src/sslperf/errors.py", "src/sslperf/fleet/cluster.py", "src/sslperf/cli/compare.py",
              "src/sslperf/cli/__init__.py")
STATUS = re.compile(r"(?:exit_code\s*=\s*|EXIT_[A-Z_]+\s*=\s*|\.exit\(|sys\.exit\(|SystemExit\()(\d+)")


def test_every_exit_status_the_code_uses_is_in_the_table():
    table = (REFERENCE / "exit-codes.md").read_text()
    listed = {int(m) for m in re.findall(r"^\|\s*(\d+)\s*\|", table, re.M)}
    used = {int(n) for f in EXIT_FILES for n in STATUS.findall((ROOT / f).read_text())}
    assert {1, 2, 3, 4, 70, 130} <= used, used           # the scan reads the definitions at all
    assert used <= listed, f"statuses used but not in docs/reference/exit-codes.md: {sorted(used - listed)}"


def test_every_template_of_the_catalog_is_on_the_case_ids_page():
    page = (REFERENCE / "case-ids.md").read_text()
    templates = {t.pattern for t in ids.templates()}
    assert len(templates) > 15
    missing = sorted(t for t in templates if f"`{t}`" not in page)
    assert not missing, f"templates not on docs/reference/case-ids.md: {missing}"


def example_ids() -> list[str]:
    """The example column of the page's table of templates."""
    page = (REFERENCE / "case-ids.md").read_text()
    rows = page[page.index("## Every template"):].split("\n\n")[1].splitlines()[2:]
    return [re.findall(r"`([^`]+)`", row.rsplit("|", 2)[1])[0] for row in rows]


@pytest.mark.parametrize("example", example_ids())
def test_every_example_id_on_the_case_ids_page_is_one_sslperf_accepts(example):
    if example.startswith(("pke/", "other/", "exec/")):      # ids only imports (and exec's digests) make
        assert ids.parse(example) is not None, example
    else:
        assert suites.parse_case(example).id == example

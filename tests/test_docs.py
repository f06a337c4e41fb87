"""The documentation: the site builds strictly (a broken link or anchor fails it) and asks no network for
anything; the CLI reference it generates and the man page name every command; shell completion works from the
installed `sslperf`; and every `$ sslperf …` line of a ```console block in docs/ or the README parses with the
real CLI — the blocks marked `<!-- test: run -->` are run, in order, in a fresh data directory."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from sslperf.cli import cli
from sslperf.cli import manpage
from sslperf.errors import SslperfError

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
SSLPERF = Path(sys.executable).parent / "sslperf"       # the installed entry point
RUN_MARK = "<!-- test: run -->"
RUN_TIMEOUT = 180           # seconds for one command of a run block
BUILD_TIMEOUT = 300


def visible_commands() -> list[click.Context]:
    """Every command and subcommand `sslperf --help` and its groups list (hidden ones left out)."""
    root = manpage.context(cli, "sslperf")
    return list(manpage.commands(cli, root))[1:]


def hidden_commands() -> list[str]:
    root = manpage.context(cli, "sslperf")
    return [f"sslperf {name}" for name in cli.list_commands(root) if cli.get_command(root, name).hidden]


# --- the site ------------------------------------------------------------------------------------------------------

def build_site(project: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(project / "mkdocs.yml"), "--site-dir", str(out)], capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT, env=env, cwd=project)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built strictly from this checkout (mkdocs writes every page before it refuses the warnings)."""
    out = tmp_path_factory.mktemp("site")
    return build_site(ROOT, out), out


def test_the_site_builds_strictly(site):
    result, _ = site
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}"


def test_a_broken_link_or_anchor_fails_the_strict_build(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copytree(DOCS, project / "docs")
    index = project / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [this](no-such-page.md) and [that](reference/cli.md#sslperf-nope).\n")
    result = build_site(project, tmp_path / "out")
    said = result.stdout + result.stderr
    assert result.returncode != 0
    warnings = [line for line in said.splitlines() if line.startswith("WARNING")]
    assert any("no-such-page.md" in line for line in warnings), said
    assert any("#sslperf-nope" in line for line in warnings), said


def test_the_site_asks_no_network_for_anything(site):
    """Opened from file:// with no network: no script, stylesheet or font from elsewhere (Google Fonts, a CDN)."""
    _, out = site
    remote = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""", re.I)
    pages = sorted(out.rglob("*.html"))
    assert pages
    offenders = {str(page.relative_to(out)): remote.findall(page.read_text())[:2] for page in pages
                 if remote.search(page.read_text())}
    assert not offenders


def test_the_cli_reference_has_every_command_and_no_hidden_one(site):
    _, out = site
    page = (out / "reference" / "cli.html").read_text()
    commands = visible_commands()
    assert {"sslperf tls handshake", "sslperf tls quic", "sslperf speed"} <= {c.command_path for c in commands}
    for ctx in commands:
        anchor = ctx.command_path.replace(" ", "-")
        assert f'id="{anchor}"' in page, f"{ctx.command_path} is not in the CLI reference"
        assert f"Usage: {ctx.command_path}" in page or f"{ctx.command_path} [OPTIONS]" in page
    for path in hidden_commands():
        assert f'id="{path.replace(" ", "-")}"' not in page, f"the hidden {path} is in the CLI reference"


# --- the man page ---------------------------------------------------------------------------------------------------

def groff(page: Path) -> subprocess.CompletedProcess:
    if shutil.which("groff") is None:
        pytest.fail("groff is not installed; scripts/bootstrap.sh installs groff-base for the tests")
    return subprocess.run(["groff", "-man", "-Tutf8", "-ww", str(page)], capture_output=True, text=True, timeout=60)


def plain(rendered: str) -> str:
    """groff's text with its typographic dashes and minus signs read as the hyphen one types, and without the
    overstrikes (X backspace X) that grotty writes for bold and underline where SGR output is off."""
    return re.sub("[\u2010\u2011\u2212]", "-", re.sub(".\b", "", rendered))


def test_the_man_page_renders_without_warnings_and_names_every_command(tmp_path):
    out = tmp_path / "sslperf.1"
    made = subprocess.run([sys.executable, "-m", "sslperf.cli.manpage", "-o", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    rendered = groff(out)
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    text = plain(rendered.stdout)
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "ENVIRONMENT", "EXIT STATUS", "SEE ALSO"):
        assert re.search(rf"^{section}$", text, re.M), section
    for ctx in visible_commands():
        assert re.search(rf"^\s+{re.escape(ctx.command_path)}$", text, re.M), f"no section for {ctx.command_path}"
    for path in hidden_commands():
        assert path not in text
    assert "--fail-above" in text and "SSLPERF_DATA_DIR" in text and "SSLPERF_SCHEDULER" in text


def test_the_man_page_escapes_what_roff_would_read_as_requests(tmp_path):
    """Help text that starts a line with . or ', holds a backslash or a hyphen, or is not ASCII, prints as written."""
    @click.command()
    @click.option("--path-like", help="a C:\\dir\\n path, 'quoted' and µs.")
    def demo(path_like):
        """Summary line.

        \b
        .starts with a dot
        'starts with a quote
        back\\slash -- and a \\fB font change
        """
    out = tmp_path / "demo.1"
    out.write_text(manpage.render(demo, "demo"))
    rendered = groff(out)
    assert rendered.stderr == ""
    text = plain(rendered.stdout)
    for written in (".starts with a dot", "'starts with a quote", "back\\slash -- and a \\fB font change",
                    "--path-like TEXT", "a C:\\dir\\n path, 'quoted' and µs."):
        assert written in text, written


# --- shell completion -----------------------------------------------------------------------------------------------

def test_bash_completion_from_the_installed_command_offers_tls():
    assert SSLPERF.exists(), f"{SSLPERF} is not installed (pip install -e .)"
    script = subprocess.run([str(SSLPERF)], env={**os.environ, "_SSLPERF_COMPLETE": "bash_source"},
                            capture_output=True, text=True, timeout=60)
    assert script.returncode == 0 and "complete -o nosort -F _sslperf_completion sslperf" in script.stdout
    completes = 'eval "$SCRIPT"; COMP_WORDS=(sslperf "$WORD"); COMP_CWORD=1; _sslperf_completion sslperf; ' \
                'printf "%s\\n" "${COMPREPLY[@]}"'
    env = {**os.environ, "PATH": f"{SSLPERF.parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "SCRIPT": script.stdout}
    offered = {}
    for word in ("tl", "me"):
        done = subprocess.run(["bash", "--norc", "--noprofile", "-c", completes], env={**env, "WORD": word},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        offered[word] = done.stdout.split()
    assert offered["tl"] == ["tls"]
    assert offered["me"] == []          # measure-request is hidden


# --- the commands the docs show -------------------------------------------------------------------------------------

@dataclass
class Shown:
    line: int                   # where the command starts in its file
    text: str                   # as written, continuation lines joined
    run: bool                   # in a block marked RUN_MARK


FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*console\b")


def shown_commands(path: Path) -> list[Shown]:
    """The `$ ` lines of each ```console block (continuation lines ending in ` \\` joined)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        before = [line.strip() for line in lines[:i] if line.strip()]
        run = bool(before) and before[-1] == RUN_MARK
        i += 1
        while i < len(lines) and lines[i].strip() != fence.group(1):
            start, text = i, lines[i].strip()
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1].rstrip() + " " + lines[i].strip()
            if text.startswith("$ "):
                found.append(Shown(start + 1, text[2:].strip(), run))
            i += 1
        i += 1
    return found


def commands_of(text: str) -> list[list[str]]:
    """The commands of one shell line, split at && ; || and | (no shell runs them)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, current = [], []
    for token in lexer:
        if token in ("&&", "||", ";", "|"):
            commands.append(current)
            current = []
        else:
            current.append(token)
    return [command for command in commands + [current] if command]


def parse(args: list[str]) -> None:
    """Parse `sslperf ARGS` as the CLI would — each group's options, its subcommand (the tls group's translation
    of the old flags included), down to the command's own options and values — and run nothing."""
    command, name, parent = cli, "sslperf", None
    while True:
        ctx = command.make_context(name, list(args), parent=parent)
        if not isinstance(command, click.Group):
            return
        rest = [*ctx._protected_args, *ctx.args]    # what Group.invoke hands to resolve_command
        if not rest:
            return
        name, command, args = command.resolve_command(ctx, rest)
        parent = ctx


def parse_failures(path: Path) -> list[str]:
    failures = []
    for shown in shown_commands(path):
        for argv in commands_of(shown.text):
            if argv[0] != "sslperf":
                continue
            try:
                parse(argv[1:])
            except click.exceptions.Exit as done:
                if done.exit_code:
                    failures.append(f"{path}:{shown.line}: `{shown.text}` exits {done.exit_code}")
            except click.ClickException as exc:
                failures.append(f"{path}:{shown.line}: `{shown.text}`: {exc.format_message()}")
            except SslperfError as exc:
                failures.append(f"{path}:{shown.line}: `{shown.text}`: {exc}")
    return failures


def doc_files() -> list[Path]:
    return sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]


def doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.fixture
def parsing_here(tmp_path, monkeypatch, sslperf_dirs):
    """Parsing makes what an option's check makes (an --out directory): in a directory of the test's own."""
    monkeypatch.delenv("SSLPERF_DB", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("path", doc_files(), ids=doc_id)
def test_every_command_a_doc_shows_parses(path, parsing_here):
    failures = parse_failures(path)
    assert not failures, "\n".join(failures)


def test_a_misspelled_option_in_a_doc_is_named(tmp_path, parsing_here):
    doc = tmp_path / "guide.md"
    doc.write_text("# A guide\n\n```console\n$ sslperf speed --quick --lib system\n$ sslperf tls loopback \\\n"
                   "    --lib system --requets 5\n$ sslperf tls --loopback --lib system && sslperf runs lst\n```\n")
    failures = parse_failures(doc)
    assert len(failures) == 2, failures
    assert failures[0].startswith(f"{doc}:5: `sslperf tls loopback --lib system --requets 5`: ")
    assert "No such option" in failures[0] and "--requets" in failures[0]
    assert failures[1].startswith(f"{doc}:7: ") and "runs" in failures[1] and "lst" in failures[1]


def run_failures(path: Path, env: dict[str, str], workdir: Path) -> list[str]:
    """Each command of the run blocks, in order, with the installed sslperf; what did not exit 0."""
    failures = []
    for shown in (s for s in shown_commands(path) if s.run):
        for argv in commands_of(shown.text):
            if any(token in ("<", ">", ">>", "&") for token in argv):
                failures.append(f"{path}:{shown.line}: `{shown.text}` needs a shell (a redirection); not run")
                break
            program = str(SSLPERF) if argv[0] == "sslperf" else argv[0]
            try:
                done = subprocess.run([program, *argv[1:]], env=env, cwd=workdir, capture_output=True, text=True,
                                      timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                failures.append(f"{path}:{shown.line}: `{shown.text}` ran over {RUN_TIMEOUT} s")
                break
            if done.returncode != 0:
                failures.append(f"{path}:{shown.line}: `{shown.text}` exited {done.returncode}:\n"
                                f"{done.stderr[-2000:]}")
                break
    return failures


@pytest.fixture
def fresh_run_env(e2e_env, tmp_path) -> tuple[dict[str, str], Path]:
    """The end-to-end tests' cache (its libraries and compiled harnesses), a data directory of this test's own."""
    env = {**os.environ, **e2e_env, "SSLPERF_DATA_DIR": str(tmp_path / "data")}
    env.pop("SSLPERF_DB", None)
    workdir = tmp_path / "work"
    workdir.mkdir()
    # The guides name sample files as a checkout has them (tests/data/…); their outputs land in the work dir.
    (workdir / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    return env, workdir


@pytest.mark.parametrize("path", [p for p in doc_files() if any(s.run for s in shown_commands(p))], ids=doc_id)
def test_the_run_blocks_of_a_doc_run(path, fresh_run_env):
    failures = run_failures(path, *fresh_run_env)
    assert not failures, "\n".join(failures)


def test_run_blocks_are_found_and_a_failing_one_is_named(tmp_path, fresh_run_env):
    doc = tmp_path / "guide.md"
    doc.write_text(f"```console\n$ sslperf libs variants\n```\n\n{RUN_MARK}\n```console\n$ sslperf libs list\n"
                   "output line\n$ sslperf runs show no-such-run\n```\n")
    shown = shown_commands(doc)
    assert [(s.line, s.run) for s in shown] == [(2, False), (7, True), (9, True)]
    failures = run_failures(doc, *fresh_run_env)
    assert len(failures) == 1 and failures[0].startswith(f"{doc}:9: `sslperf runs show no-such-run` exited 2")

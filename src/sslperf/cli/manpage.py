"""sslperf(1), the man page, made from the click commands themselves — the same objects `--help` prints — so it
cannot drift from the CLI: `python -m sslperf.cli.manpage [-o FILE]`. Every command that is not hidden gets a
section with its usage, its help and its options as --help words them; the page ends with the environment
variables sslperf reads and its exit codes, both taken from the code."""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import click

import sslperf
from sslperf import errors
from sslperf.cli import EXIT_BUG, cli

# The variables a user sets (the others named SSLPERF_* are how sslperf talks to its own workers and harness).
ENVIRONMENT = {
    "SSLPERF_DATA_DIR": "Where the results store (SQLite) and registered libraries are kept; default: the user's "
                        "data directory (~/.local/share/sslperf).",
    "SSLPERF_CACHE_DIR": "Where sources, built libraries and compiled harnesses are kept; default: the user's cache "
                         "directory (~/.cache/sslperf).",
    "SSLPERF_DB": "The results store, as --db takes it: sqlite:///PATH or postgresql://USER@HOST/DB.",
    "SSLPERF_DB_TIMEOUT": "Seconds to wait for the store's lock (default 60).",
    "SSLPERF_HOST": "The machine's name in the store (default: the hostname); fleet workers default to their tag.",
    "SSLPERF_SCHEDULER": "The fleet's scheduler, as --scheduler takes it (tls://HOST:8786).",
    "SSLPERF_CONFIG_DIR": "Where the fleet's credentials are kept, in fleet/ (default: the user's config directory, "
                          "~/.config/sslperf).",
    "SSLPERF_DB_PASSWORD_FILE": "A file holding the password of a PostgreSQL store whose URL has none.",
    "SSLPERF_CCACHE": "0 builds without ccache (default: ccache when it is installed).",
    "SSLPERF_CCACHE_DIR": "ccache's store for library builds (default: ccache/ in the cache directory).",
    "SSLPERF_INSTRUCTION_COUNTER": "The counter of --metric instructions: auto (the CPU's own where the harness can "
                                   "open it, else callgrind), perf or callgrind.",
    "SSLPERF_CRATES_INDEX": "The crates.io index that lists the library sources on offer (default "
                            "https://index.crates.io).",
    "SSLPERF_DEBIAN_MIRROR": "The Debian mirror that serve-load fetches server sources from (default "
                             "http://deb.debian.org/debian).",
    "SSLPERF_DEBIAN_SUITES": "The Debian suites serve-load reads (default: bookworm bookworm-updates).",
}


def exit_statuses() -> list[tuple[int, str]]:
    """The exit codes, each from the constant the code exits with."""
    from sslperf.cli.compare import EXIT_REGRESSION

    return [(0, "Success."),
            (errors.NothingMeasured.exit_code, "A run measured nothing (every case failed; the run is kept), or a "
                                               "fleet left a machine type unfinished."),
            (errors.SslperfError.exit_code, "A usage error, bad input or an unusable environment (one paragraph "
                                            "on standard error says which, and what to do)."),
            (errors.BuildFailed.exit_code, "A library build failed (its log is kept)."),
            (EXIT_REGRESSION, "A regression: compare --fail-above found a case slower than the baseline."),
            (EXIT_BUG, "A bug in sslperf (with its traceback)."),
            (errors.BuildInterrupted.exit_code, "Interrupted (Ctrl-C or SIGTERM); what was measured is kept.")]


# --- roff -----------------------------------------------------------------------------------------------------------

def escape(text: str) -> str:
    """`text` as roff prints it: backslashes and hyphens escaped, other than ASCII as named glyphs (groff reads
    its input as Latin-1 unless told otherwise), and a line that would start with . or ' kept as text."""
    out = []
    for char in text:
        if char == "\\":
            out.append("\\e")
        elif char == "-":
            out.append("\\-")
        elif ord(char) < 32 and char not in "\n\t":      # a stray \b (backspace) of a help text
            continue
        elif ord(char) > 126:
            out.append(f"\\[u{ord(char):04X}]")
        else:
            out.append(char)
    return _guard_lines("".join(out))


def _guard_lines(text: str) -> str:
    return "\n".join("\\&" + line if line[:1] in (".", "'") else line for line in text.split("\n"))


def inline(text: str) -> str:
    """Escaped text whose `code` spans are bold (what the help texts quote is what one types)."""
    parts = re.split(r"`([^`]+)`", text)
    return "".join(escape(part) if i % 2 == 0 else f"\\fB{escape(part)}\\fR" for i, part in enumerate(parts))


def breakable(text: str) -> str:
    """Escaped, with a break point after each | and , (a choice list is longer than a line, and has no space)."""
    return re.sub(r"([|,])", r"\1\\:", escape(text))


def quoted(text: str) -> str:
    """A macro argument: escaped, in double quotes (a quote inside is \\(dq)."""
    return '"' + escape(text).replace('"', "\\(dq") + '"'


def help_paragraphs(text: str) -> Iterator[str]:
    """A click help text as roff: each paragraph filled, a \\b paragraph kept line for line (as --help keeps it)."""
    for raw, lines in _paragraphs(inspect.cleandoc(text.split("\f")[0])):
        if raw:
            body = textwrap.dedent("\n".join(lines))       # the lines keep their indents
            yield ".PP\n.nf\n" + "\n".join(inline(line) for line in body.split("\n")) + "\n.fi"
        else:
            yield ".PP\n" + inline(" ".join(line.strip() for line in lines))


def _paragraphs(text: str) -> Iterator[tuple[bool, list[str]]]:
    """(kept as written, lines) of each paragraph: a blank line ends one; a \\b line starts one kept as written,
    also where a help text puts it right after another paragraph's last line."""
    raw, lines = False, []
    for line in text.split("\n"):
        if not line.strip() or line.strip() == "\b":
            if lines:
                yield raw, lines
            raw, lines = line.strip() == "\b", []
        else:
            lines.append(line)
    if lines:
        yield raw, lines


# --- the page -------------------------------------------------------------------------------------------------------

def context(command: click.Command, name: str, parent: click.Context | None = None) -> click.Context:
    """The context --help would see (the root's settings, -h among them, carry down to every subcommand)."""
    return command.context_class(command, info_name=name, parent=parent, **command.context_settings)


def commands(command: click.Command, ctx: click.Context) -> Iterator[click.Context]:
    """`command`'s context, then its subcommands' in the order --help lists them; hidden ones left out."""
    yield ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from commands(sub, context(sub, name, ctx))


def usage(ctx: click.Context) -> str:
    pieces = ctx.command.collect_usage_pieces(ctx)
    return f"\\fB{escape(ctx.command_path)}\\fR " + " ".join(f"\\fI{breakable(piece)}\\fR" for piece in pieces)


def options(ctx: click.Context) -> Iterator[str]:
    """Each option as --help shows it: its spellings and value, then its help with the default (arguments are in
    the usage line, as --help has them)."""
    for param in ctx.command.get_params(ctx):
        record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
        if record is None:      # hidden
            continue
        names, help_text = record
        yield f".TP\n\\fB{breakable(names)}\\fR\n{inline(help_text) if help_text else ''}".rstrip()


def command_section(ctx: click.Context) -> Iterator[str]:
    command = ctx.command
    yield f".SS {quoted(ctx.command_path)}"
    yield usage(ctx)
    if command.help:
        yield from help_paragraphs(command.help)
    if isinstance(command, click.Group):
        names = [name for name in command.list_commands(ctx)
                 if (sub := command.get_command(ctx, name)) is not None and not sub.hidden]
        yield f".PP\nCommands: {', '.join(escape(name) for name in names)}."
    listed = list(options(ctx))
    if listed:
        yield ".PP\nOptions:\n.RS"
        yield from listed
        yield ".RE"


def environment(root: click.Command, root_ctx: click.Context) -> dict[str, str]:
    """ENVIRONMENT plus any option's environment variable it does not name (so a new one is never left out)."""
    described = dict(ENVIRONMENT)
    for ctx in commands(root, root_ctx):
        for param in ctx.command.get_params(ctx):
            for name in [param.envvar] if isinstance(param.envvar, str) else param.envvar or []:
                described.setdefault(name, f"The default of {param.opts[-1]} ({ctx.command_path}).")
    return described


def render(root: click.Command = cli, prog_name: str = "sslperf") -> str:
    root_ctx = context(root, prog_name)
    first, *rest = re.split(r"\n\s*\n", inspect.cleandoc(root.help or ""), maxsplit=1)
    summary = re.sub(rf"^{re.escape(prog_name)}:\s*", "", " ".join(first.split())).rstrip(".")
    page = [f'.TH {prog_name.upper()} 1 "" {quoted(f"{prog_name} {sslperf.__version__}")} "User Commands"',
            ".nh\n.ad l",          # no hyphenation, no stretched spaces: option names and ids read as typed
            ".SH NAME", f"{escape(prog_name)} \\- {inline(summary)}",
            ".SH SYNOPSIS", usage(root_ctx),
            ".SH DESCRIPTION", *help_paragraphs(rest[0] if rest else ""),
            ".PP\nEach command's options follow under COMMANDS; "
            f"\\fB{escape(prog_name)} \\fICOMMAND\\fB \\-\\-help\\fR says the same.",
            ".SH OPTIONS", *options(root_ctx),
            ".SH COMMANDS"]
    for ctx in list(commands(root, root_ctx))[1:]:
        page += command_section(ctx)
    page.append(".SH ENVIRONMENT")
    for name, text in environment(root, root_ctx).items():
        page.append(f".TP\n\\fB{escape(name)}\\fR\n{inline(text)}")
    page.append(".SH EXIT STATUS")
    for code, text in exit_statuses():
        page.append(f".TP\n\\fB{code}\\fR\n{inline(text)}")
    page += [".SH SEE ALSO",
             f"\\fB{escape(prog_name)} \\fICOMMAND\\fB \\-\\-help\\fR; the documentation site built from "
             "\\fIdocs/\\fR by \\fBmkdocs build\\fR (its CLI reference is made from the same commands as this page); "
             "\\fBopenssl\\-speed\\fR(1), \\fBperf\\fR(1), \\fBvalgrind\\fR(1)."]
    return "\n".join(page) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sslperf.cli.manpage", description="Write sslperf(1) in roff.")
    parser.add_argument("-o", "--output", type=Path, help="write the page here (default: standard output)")
    args = parser.parse_args(argv)
    page = render()
    if args.output:
        args.output.write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()

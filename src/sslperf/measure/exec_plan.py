"""What `sslperf exec`'s options become before anything runs: the command (argv, never a shell string), its name
as a case (`exec/curl-1f2e3d4c`: the program and a digest of the whole command, so the same command is the same
case in every run, bisect and track), the rounds and each library's runs."""

from __future__ import annotations

import hashlib
import json
import re
import shlex

from sslperf.cases.ids import Case
from sslperf.errors import SslperfError
from sslperf.measure import exec_servers, plan
from sslperf.measure.modes import program
from sslperf.measure.request import Request
from sslperf.untrusted import shorten, visible

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,79}")


def default_name(command: tuple[str, ...]) -> str:
    """`curl-1f2e3d4c`: the program's file name and the first 8 hex digits of the whole command's SHA-256."""
    digest = hashlib.sha256(json.dumps(list(command)).encode()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9._+-]", "_", command[0].rsplit("/", 1)[-1])[:60].lstrip("._+-") or "program"
    return f"{stem}-{digest}"


def argv_of(text: str | None, option: str) -> tuple[str, ...]:
    """A --prepare/--setup/--cleanup command split as a shell would split words (no shell runs it)."""
    if not text:
        return ()
    try:
        words = shlex.split(text)
    except ValueError as bad:
        raise SslperfError(f"{option} `{shorten(visible(text), 80)}` cannot be split into words: {bad}. Nothing was "
                           "run.", hint="Quote it as a shell would; for pipes or redirections give "
                                        f"{option} \"sh -c '…'\".") from None
    if not words:
        raise SslperfError(f"{option} is blank. Nothing was run.", hint=f"Give a command, or leave {option} out.")
    return tuple(words)


def case_of(command: tuple[str, ...], name: str | None = None, verb: str = "sslperf exec") -> Case:
    """The case a command is measured as: `exec/NAME`, NAME given or made from the command (default_name)."""
    if not command:
        raise SslperfError(f"`{verb}` needs the command to measure after `--`. Nothing was run.",
                           hint="e.g. sslperf exec --lib system --lib openssl-3.6+shared -- curl -s --version")
    name = default_name(command) if name is None else name
    if not NAME.fullmatch(name):
        raise SslperfError(f"--name `{shorten(visible(name), 80)}` is not a case name: letters, digits, `.`, `_`, `+` "
                           "and `-`, at most 80, starting with a letter or digit. Nothing was run.",
                           hint="e.g. --name curl-get")
    return program.case(name)


def request(p: dict) -> Request:
    command = tuple(p["argv"])
    case = case_of(command, p["name"])
    settings = plan.settings(1, 1, None, True, p["rounds"], None, p["metric"])
    options = program.Options(command, p["runs"], p["warmup"], argv_of(p["prepare"], "--prepare"),
                              argv_of(p["setup"], "--setup"), argv_of(p["cleanup"], "--cleanup"), p["timeout"],
                              p["server"])
    if options.server:
        exec_servers.parse(options.server)          # a server sslperf cannot start: refused before anything runs
    used = sorted({key for argv in (command, options.prepare, options.setup, options.cleanup) for arg in argv
                   for key in program.SERVER_PLACEHOLDERS if key in arg})
    if used and not options.server:
        raise SslperfError(f"The command uses {' and '.join(used)}, which only --server gives. Nothing was run.",
                           hint="Add --server LIB (sslperf's HTTPS server of that library on 127.0.0.1, or "
                                "nginx:LIB, haproxy:LIB), e.g. "
                                "--server system -- curl -s --cacert {ca} https://localhost:{port}/")
    return Request("sslperf exec", list(p["lib_names"] or ("system",)), [case.id], settings,
                   {"exec": options}, {"suite": "exec"})

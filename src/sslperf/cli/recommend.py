"""`sslperf recommend`: argued TLS server settings for one library, from
stored runs or from the few quick cases it measures itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from sslperf import advice as decisions
from sslperf import suites
from sslperf.advice_config import FORMATS, render
from sslperf.cli.common import certificates, find_libs, measure, open_store
from sslperf.errors import SslperfError

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False)
MASK = "no-aesni"


@click.command()
@click.option("--lib", "-l", "lib_name", default="system", show_default=True, help="The server's library.")
@click.option("--clients", type=click.Choice(sorted(decisions.CLIENT_PROFILES)), default="mixed", show_default=True,
              help="Who connects: mixed, mobile (no AES instructions) or desktop (AES-NI).")
@click.option("--min-security", type=click.Choice([str(f) for f in decisions.FLOORS]), default="128",
              show_default=True, help="Security floor in bits; nothing below it is offered, whatever its speed.")
@click.option("--compat", is_flag=True, help="Also an RSA certificate for clients without ECDSA (dual certificates).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--from-run", "run_ids", multiple=True, metavar="RUN",
              help="Use these stored runs (repeatable); cases they lack are measured now.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the snippet here too.")
@click.option("--json", "as_json", is_flag=True, help="Print the advice and its figures as JSON.")
@click.option("--no-store", is_flag=True, help="Do not keep what is measured in the results store.")
@click.pass_context
def recommend(ctx, lib_name, clients, min_security, compat, fmt, run_ids, out, as_json, no_store) -> None:
    """Turn measured costs into TLS server settings: the AEAD order (AES-GCM
    or ChaCha20 first, from the measured ratio with and without AES
    instructions), key exchange groups by measured cost, the certificate
    type, signature algorithms and resumption, each argued with its numbers,
    as text or a ready-to-paste nginx, HAProxy, Apache or openssl.cnf snippet.
    Every string is checked against the library itself before it is printed.

    \b
    Examples:
      sslperf recommend
      sslperf recommend --lib openssl-3.6 --format nginx
      sslperf recommend --clients mobile --format openssl-cnf --out tls.cnf
      sslperf recommend --lib boringssl --compat --format nginx
    """
    floor = int(min_security)
    (lib,) = find_libs((lib_name,))
    if fmt == "openssl-cnf" and lib.flavor in ("boringssl", "aws-lc"):      # before measuring anything
        raise SslperfError(f"{lib.name} is {lib.flavor}, which does not read openssl.cnf.",
                           hint="Use --format nginx, haproxy, apache or text.")
    evidence = gather(ctx, lib, floor, run_ids, no_store)
    checker = LibraryCheck(lib)
    try:
        result = decisions.decide(evidence, lib.name, lib.flavor, lib.version_string or lib.version, clients, floor,
                                  compat, checker.accepts)
    except ValueError as exc:
        raise SslperfError(f"sslperf cannot recommend settings for {lib.name}: {exc}.",
                           hint="Check `sslperf speed --quick --lib ...` runs on this library.") from None
    if not evidence.masked:
        result.notes.append("note: ChaCha20 vs AES without AES instructions was not measured (CPU masks need x86); "
                            "the AEAD order rests on this CPU alone")
    checker.verify(result)
    snippet = render(result, fmt)
    if out:
        out.write_text(snippet)
    if as_json:
        click.echo(json.dumps(as_dict(result, evidence), indent=1))
        return
    click.echo(snippet, nl=False)
    if evidence.sources:
        err_console.print(f"[dim]figures from run(s) {', '.join(evidence.sources)}"
                          + (f"; snippet written to {escape(str(out))}" if out else "") + "[/dim]")


def gather(ctx, lib, floor: int, run_ids: tuple[str, ...], no_store: bool) -> decisions.Evidence:
    """Measurements of `lib` from the named runs, plus whatever is missing measured now."""
    from sslperf.runner import Settings

    plain_ids, masked_ids = decisions.needed_cases(floor)
    plain, masked, sources = [], [], []
    if run_ids:
        store = open_store(ctx)
        for run in sorted((store.load(run_id) for run_id in run_ids), key=lambda r: r.started):
            mine = [m for m in run.measurements if m.lib == lib.name]
            if not mine:
                raise SslperfError(f"Run {run.id} has no measurements of {lib.name}.",
                                   hint=f"Its libraries: {', '.join(l.name for l in run.libs)}.")
            sources.append(run.id)
            mask = run.environment.get("mask")
            if mask is None:
                plain = _newest(plain + mine)
            elif mask == MASK:
                masked = _newest(masked + mine)
    plain_todo = [c for c in plain_ids if c not in {m.case for m in plain}]
    masked_todo = [c for c in masked_ids if c not in {m.case for m in masked}]
    depth = suites.DEPTHS["quick"]
    settings = Settings(depth.target_ms, 10)
    with _progress() as bar:
        task = bar.add_task("measuring", total=None)

        def report(what: str, done: int, total: int) -> None:
            bar.update(task, description=escape(what), completed=done, total=total)

        if plain_todo:
            with certificates(lib) as workdir:
                run = measure(ctx, [lib], [suites.parse_case(c) for c in plain_todo], settings, "sslperf recommend",
                              {"suite": "recommend"}, {"SSLPERF_CERT_DIR": str(workdir)}, no_store, report)
            plain += run.measurements
            sources.append(run.id)
        if masked_todo and _can_mask():
            run = measure(ctx, [lib], [suites.parse_case(c) for c in masked_todo],
                          Settings(depth.target_ms, 10, MASK), "sslperf recommend", {"suite": "recommend"},
                          no_store=no_store, progress=report)
            masked += run.measurements
            sources.append(run.id)
    return decisions.Evidence(plain, masked, [] if no_store else sources)


def _newest(measurements):
    """One measurement per case: the last one given (runs are read oldest first)."""
    return list({m.case: m for m in measurements}.values())


def _can_mask() -> bool:
    """Whether this CPU takes OPENSSL_ia32cap masks (environment decides, as for `speed --cpu-mask`)."""
    from sslperf.environment import mask_env
    try:
        mask_env(MASK)
    except SslperfError:
        return False
    return True


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console, transient=True, disable=not err_console.is_terminal)


class LibraryCheck:
    """Asks the library itself (the harness's check-config) whether it accepts a setting."""

    def __init__(self, lib):
        from sslperf.native import harness_binary
        self.lib = lib
        self.binary = str(harness_binary(lib))

    def run(self, *settings: str) -> dict:
        try:
            done = subprocess.run([self.binary, "check-config", *settings], capture_output=True, text=True,
                                  timeout=60)
        except subprocess.TimeoutExpired:
            raise SslperfError(f"Checking TLS settings against {self.lib.name} timed out.") from None
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            raise SslperfError(f"The harness for {self.lib.name} did not answer check-config: {done.stderr[-300:]}")
        return json.loads(lines[-1])

    def accepts(self, key: str, value: str) -> bool:
        return self.run(f"{key}={value}").get("type") == "config"

    def verify(self, result: decisions.Advice) -> None:
        """The final strings must be accepted whole, and the cipher string must
        resolve to exactly the suites asked for (OpenSSL drops unknown names)."""
        settings = [f"ciphers={result.cipher_string()}", f"groups={':'.join(g.tls_name for g in result.groups)}",
                    f"sigalgs={':'.join(result.sigalgs)}"]
        if result.flavor != "boringssl":
            settings.append(f"ciphersuites={':'.join(result.tls13_suites)}")
        answer = self.run(*settings)
        if answer.get("type") != "config":
            raise SslperfError(f"{self.lib.name} rejects the recommended {answer.get('key')} "
                               f"`{answer.get('value')}`: {answer.get('reason')}.",
                               hint="This is a gap in sslperf's tables for this library version; please report it.")
        resolved = [c["name"] for c in answer["ciphers"] if c["version"] != "TLSv1.3"]
        if resolved != list(dict.fromkeys(result.tls12_ciphers())) and not result.equal_preference:
            raise SslperfError(f"{self.lib.name} resolves the cipher string to {':'.join(resolved)}, not the "
                               f"suites recommended.", hint="Please report it: sslperf's tables need a fix.")


def as_dict(result: decisions.Advice, evidence: decisions.Evidence) -> dict:
    return {
        "lib": result.lib, "version": result.version, "clients": result.clients,
        "min_security": result.min_security,
        "cipher_string": result.cipher_string(), "tls13_suites": result.tls13_suites,
        "groups": [g.tls_name for g in result.groups], "sigalgs": result.sigalgs,
        "certificates": [c.name for c in result.certs], "prioritize_chacha": result.prioritize_chacha,
        "equal_preference": [a.name for a in result.equal_preference],
        "points": [{"topic": p.topic, "decision": p.decision, "because": p.because} for p in result.points],
        "notes": result.notes,
        "figures_us": {**{c: evidence.micros(c) for c in evidence.plain},
                       **{f"{c}@{MASK}": evidence.micros(c, True) for c in evidence.masked}},
        "runs": evidence.sources,
    }

"""`sslperf fleet`: runs across machines on a Dask cluster."""

from __future__ import annotations

import functools
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from sslperf.cli.common import make_console, open_store
from sslperf.cli.options import Finite
from sslperf.fleet.cluster import FleetError, FleetIncomplete, check_tag
from sslperf.fleet.endpoint import DEFAULT_PORT
from sslperf.fleet.scheduler import DEFAULT_HOST

console = make_console()
err_console = make_console(stderr=True)

SUITE_VERBS = ("speed", "api", "tls", "noise")
NOT_ON_A_FLEET = {"out": "--out (each machine's run is in the store: `sslperf runs export RUN --out FILE`)",
                  "no_store": "--no-store (a fleet's results are only gathered through the store)",
                  "list_only": "--list (list the cases with `sslperf VERB --list` here)"}


INSECURE_HELP = ("Allow plain tcp:// (no certificates): anyone who reaches it can run code on every machine. "
                 "Loopback only; give it twice to insist on another address.")


def scheduler_option(command):
    """--scheduler and --insecure, handed to the command as one checked fleet.endpoint.Endpoint."""
    @functools.wraps(command)
    def checked(*args, scheduler: str, insecure: int, **kwargs):
        from sslperf.fleet import endpoint

        return command(*args, scheduler=endpoint.parse(scheduler, insecure), **kwargs)

    checked = click.option("--insecure", count=True, help=INSECURE_HELP)(checked)
    return click.option("--scheduler", envvar="SSLPERF_SCHEDULER", required=True, metavar="ADDRESS",
                        help="The fleet's scheduler, as `sslperf fleet scheduler` prints it, e.g. "
                             "tls://10.0.0.5:8786 (env SSLPERF_SCHEDULER).")(checked)


@click.group()
def fleet() -> None:
    """Measure on many machines at once, placed by a Dask scheduler.

    \b
    Each machine runs a worker tagged with its machine type; a suite goes to
    one worker of every type, results go into one PostgreSQL store, and
    `sslperf report --hosts` draws them side by side.

    Scheduler, workers and clients talk TLS and each requires the others'
    certificates, signed by the fleet's own CA (`sslperf fleet credentials`).

    \b
      sslperf fleet scheduler --host 10.0.0.5           # once; makes the credentials
      sslperf fleet credentials --export worker w.tgz   # there; copy w.tgz to each machine
      sslperf fleet credentials --install w.tgz         # on each machine, then:
      sslperf fleet worker --scheduler tls://10.0.0.5:8786 --tag c7i
      sslperf fleet build --scheduler tls://10.0.0.5:8786 openssl-3.0 openssl-3.6
      sslperf --db postgresql://… fleet speed --scheduler tls://10.0.0.5:8786 --quick --lib openssl-3.0 --lib openssl-3.6
    """


@fleet.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="The address to listen on: an address of this machine the workers reach (0.0.0.0 for all).")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--http-port", type=click.IntRange(0, 65535), default=8787, show_default=True,
              help="Dask's HTTP server (answers /health only), on the same address; 0: any free port.")
@click.option("--name", "names", multiple=True, metavar="NAME",
              help="Another name or address of this machine, written into the certificates when they are made "
                   "(repeatable; for people reading them: peers check the fleet's CA, not names).")
@click.option("--insecure", count=True, help=INSECURE_HELP)
def scheduler(host, port, http_port, names, insecure) -> None:
    """Run the fleet's scheduler here until stopped (Ctrl-C).

    The first start makes the fleet's credentials (see `fleet credentials`);
    every worker and client then needs a certificate signed by its CA."""
    from sslperf.fleet import credentials, scheduler as fleet_scheduler

    def started(address: str, made: list) -> None:
        if made:
            err_console.print(f"made the fleet's credentials in {escape(str(credentials.directory()))}; give each "
                              "other machine a bundle: `sslperf fleet credentials --export worker FILE` (or client)")
        err_console.print(f"scheduler at [bold]{escape(address)}[/] "
                          + ("(plain TCP: no certificates)" if insecure else "(TLS, certificates required)"))

    fleet_scheduler.serve(host, port, http_port, insecure, list(names), started)


@fleet.command()
@click.option("--export", "export", nargs=2, metavar="ROLE FILE",
              help="Write a bundle for another machine: ROLE is worker, client or scheduler.")
@click.option("--install", "bundle", type=click.Path(dir_okay=False, path_type=Path),
              help="Install a bundle made by --export on the scheduler's machine.")
@click.option("--renew", is_flag=True, help="Make new credentials, replacing these (every machine needs a new bundle).")
@click.option("--force", is_flag=True, help="With --export: replace an existing file.")
@click.option("--name", "names", multiple=True, metavar="NAME",
              help="A name or address of the scheduler's machine, written into the certificates (repeatable; for "
                   "people reading them: peers check the fleet's CA, not names).")
def credentials(export, bundle, renew, force, names) -> None:
    """The fleet's credentials: its own CA and a certificate per role.

    \b
    Without options: make them here (the scheduler's machine) unless they
    exist, and say where they are. Keys are 0600 in a 0700 directory under
    the config dir (SSLPERF_CONFIG_DIR). Another machine gets a bundle with
    the CA's certificate and one role's certificate and key — never the CA's
    key."""
    from sslperf.fleet import credentials as made

    where = made.directory()
    if export:
        role, out = export
        if role not in made.ROLES:
            raise click.BadParameter(f"{role!r} is not a role; use one of {', '.join(made.ROLES)}.",
                                     param_hint="--export")
        path = made.export(role, Path(out), force=force)
        console.print(f"wrote {escape(str(path))} (0600): copy it to the machine and run "
                      f"`sslperf fleet credentials --install {escape(Path(out).name)}` there, then delete it")
        return
    if bundle:
        role, written = made.install(bundle)
        console.print(f"installed the fleet's {role} credentials in {escape(str(where))} "
                      f"({', '.join(p.name for p in written)})")
        return
    if (where / made.CA_CERT).exists() and not renew:
        held = [role for role in made.ROLES if made.present(role)]
        console.print(f"the fleet's credentials are in {escape(str(where))} (roles: {', '.join(held) or 'none'})")
        return
    written = made.make(list(names), renew=renew)
    console.print(f"made the fleet's credentials in {escape(str(where))}: {', '.join(p.name for p in written)}")


@fleet.command()
@scheduler_option
@click.option("--tag", required=True, help="This machine's type, e.g. c7i-avx512 or graviton3.")
@click.option("--cpu-mask", help="Hide CPU features in every measurement here (e.g. no-aesni), as speed's --cpu-mask.")
@click.option("--builds", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Builds this worker runs at once (each uses every core).")
@click.option("--name", help="The worker's name in the cluster (default: TAG-HOST-PID).")
@click.option("--host", help="The address to listen on (default: this machine's address that reaches the "
                             "scheduler).")
def worker(scheduler, tag, cpu_mask, builds, name, host) -> None:
    """Serve this machine to the cluster until stopped (Ctrl-C).

    Runs carry the host SSLPERF_HOST if set, else the tag. A worker measures
    one suite at a time, and never while another worker on the same host
    measures."""
    from sslperf.fleet.cluster import dask, serve

    check_tag(tag)
    dask()                      # the fleet extra, before the worker is announced
    err_console.print(f"worker for machine type {escape(tag)}, scheduler {escape(scheduler.address)}")
    serve(scheduler, tag, cpu_mask, builds, name, host)


@fleet.command()
@scheduler_option
def machines(scheduler) -> None:
    """The machine types in the cluster and their workers."""
    from sslperf.fleet import builds, cluster

    with cluster.connect(scheduler) as client:
        found = cluster.machines(client)
        facts = builds.take_inventory(client, found, [])
    table = Table("machine type", "worker", "host", "architecture", "libc")
    for m in found:
        table.add_row(escape(m.tag), escape(m.name), escape(facts[m.address]["host"]),
                      escape(facts[m.address]["machine"]), escape(facts[m.address]["libc"]))
    console.print(table if found else "No worker offers a machine type yet: start `sslperf fleet worker`.")


@fleet.command()
@scheduler_option
@click.option("--machine", "types", multiple=True, help="Only these machine types (default: all).")
@click.argument("names", nargs=-1, required=True)
def build(scheduler, types, names) -> None:
    """Build libraries across the cluster: each is built once per kind of
    machine (architecture and libc), on a worker that lacks it, different
    libraries on different workers at once; the other workers get a checked
    copy (a bundle, as `sslperf libs export`)."""
    from sslperf.fleet import builds, cluster

    with cluster.connect(scheduler) as client:
        workers = [m for ms in cluster.chosen_types(client, tuple(types)).values() for m in ms]
        with console.status("building across the cluster") as status:
            outcomes = builds.build_matrix(client, workers, list(names),
                                           lambda what: status.update(escape(what)))
    table = Table("library", "machines", "made on", "build s", "copied to", "error")
    for o in outcomes:
        table.add_row(escape(o.name), escape(o.kind), escape(o.source), f"{o.seconds:.0f}" if o.built else "in hand",
                      escape(", ".join(o.copied_to)) or "-", escape(o.error or ""))
    console.print(table)
    failed = [o for o in outcomes if o.error]
    if failed:
        raise FleetError(f"{len(failed)} of {len(outcomes)} libraries are not in hand everywhere: "
                         + "; ".join(f"{o.name} on {o.kind}: {o.error}" for o in failed),
                         hint="Each error names the machine and the cause; the build logs stay on that machine.")


def _suite_command(verb: str):
    @click.command(verb, context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
                   add_help_option=True)
    @scheduler_option
    @click.option("--machine", "types", multiple=True, help="Only these machine types (default: all).")
    @click.option("--task-timeout", type=Finite(60, 7 * 86400), default=6 * 3600.0, show_default=True,
                  help="Seconds one machine's suite may take before it is stopped (keeping what it measured).")
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(ctx, scheduler, types, task_timeout, args) -> None:
        _send(ctx, verb, scheduler, types, task_timeout, list(args))

    command.help = (f"Run `sslperf {verb}` on one worker of every machine type, into one store. Every "
                    f"option after the fleet's own is {verb}'s (see `sslperf {verb} --help`); the store is "
                    f"sslperf's --db, which must be a server every machine reaches (PostgreSQL).")
    return command


for _verb in SUITE_VERBS:
    fleet.add_command(_suite_command(_verb))


def _send(ctx, verb: str, scheduler, types: tuple[str, ...], timeout: float, args: list[str]) -> None:
    from sslperf.fleet import builds, cluster, suites
    from sslperf.measure import verbs
    from sslperf.measure.request import TWIN
    from sslperf.store.connect import store_url

    command, parsed = _parsed(ctx, verb, args)          # the verb's own usage errors, now
    refused = [text for key, text in NOT_ON_A_FLEET.items() if parsed.get(key)]
    if refused:
        raise click.UsageError(f"`sslperf fleet {verb}` cannot take {'; '.join(refused)}.")
    db = suites.shared_store(store_url(ctx.find_root().obj.get("db")))
    request = verbs.from_params(command, parsed)
    store = open_store(ctx)
    with cluster.connect(scheduler) as client:
        chosen = cluster.chosen_types(client, types)
        builds.refuse_missing(client, chosen, list(dict.fromkeys(n.removesuffix(TWIN) for n in request.libs)),
                              scheduler.address)
        with console.status(f"sslperf {escape(command)} on {len(chosen)} machine types") as status:
            pin_there = parsed.get("cpu") is None and not parsed.get("no_pin")
            fleet_run, outcomes = suites.send(client, store, db, request, chosen, timeout, pin_there,
                                              lambda now: status.update(_progress_line(now)))
    _print_outcomes(fleet_run, outcomes)


def _parsed(ctx, verb: str, args: list[str]) -> tuple[str, dict]:
    """(the command's path, e.g. "tls loopback", its parsed options) of `sslperf VERB ARGS`."""
    from sslperf.cli import get_verb

    command = get_verb(verb)
    context = command.make_context(verb, list(args), parent=ctx.find_root())
    if isinstance(command, click.Group):
        name, sub, rest = command.resolve_command(context, [*context.protected_args, *context.args])
        return f"{verb} {name}", sub.make_context(name, rest, parent=context).params
    return verb, context.params


def _progress_line(outcomes: dict) -> str:
    return "  ".join(f"{escape(o.tag)}: {o.results} results" + ("" if o.ok or not o.message else " (failed)")
                     for o in outcomes.values())


def _print_outcomes(fleet_run: str, outcomes: list) -> None:
    table = Table("machine type", "host", "run", "state", "results", title=f"fleet run {escape(fleet_run)}")
    for o in outcomes:
        table.add_row(escape(o.tag), escape(o.host or "-"),
                      escape((o.run_id or "-") + (f" (and {o.runs - 1} more)" if o.runs > 1 else "")),
                      escape(o.state or ("failed" if not o.ok else "-")), str(o.results))
    console.print(table)
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        kept = (f"its run {escape(o.run_id)} keeps {o.results} results ({escape(str(o.state))})" if o.run_id
                else "it stored no run")
        err_console.print(f"[bold red]{escape(o.tag)} failed:[/] {escape(o.message)}; {kept}.", soft_wrap=True)
    if failed:
        raise FleetIncomplete(f"{len(failed)} of {len(outcomes)} machine types did not finish the suite "
                         f"({', '.join(o.tag for o in failed)}).",
                         hint="What each kept is in the store; `sslperf report --hosts` draws every machine.",
                         ) from None
    console.print("[dim]Draw them side by side with `sslperf report --hosts`.[/dim]")

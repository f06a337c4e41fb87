"""What several verbs share: the console, the store chosen with --db,
finding the libraries, and printing a run or writing it out."""

from __future__ import annotations

import json

import click
from rich.markup import escape

from sslperf import userfiles
from sslperf.errors import SslperfError


WIDE = 10_000      # columns when output is not a terminal: tables take the width their content needs


def make_console(stderr: bool = False):
    """The verbs' console: no syntax highlighting and no emoji codes, so user
    text such as `root:x:0:0` prints as it is; long lines are not cut. When
    the output is not a terminal (a pipe, a file, a CI log) tables are as
    wide as their content instead of being cut to 80 columns; COLUMNS, when
    set, still decides the width."""
    import os

    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)
    if not console.is_terminal and not (os.environ.get("COLUMNS") or "").strip().isdigit():
        console.width = WIDE
    return console


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 library`, `2 libraries`, `34 cases`."""
    if count == 1:
        return f"{count} {word}"
    return f"{count:,} {many or (word[:-1] + 'ies' if word.endswith('y') else word + 's')}"


def open_store(ctx: click.Context):
    """The Store for this invocation (opened once; --db or SSLPERF_DB, else SQLite in the data dir)."""
    from sslperf.store import Store

    root = ctx.find_root()
    root.ensure_object(dict)
    if "store" not in root.obj:
        root.obj["store"] = Store(root.obj.get("db"))
    return root.obj["store"]


def store_unless(ctx: click.Context, no_store: bool):
    """The store, or None with --no-store."""
    return None if no_store else open_store(ctx)


def show(run, as_json: bool, console, metric: str = "wall", stored: bool = True, refuse: bool = True,
         details: bool = False) -> None:
    """The run as tables or JSON; then (unless `refuse` is false: the caller
    says it after its own last words), when every case failed, that said last
    (exit 1), so neither a reader nor a script takes it for a measurement. A
    run whose cases are all n/a is an answer (the library has none of them),
    not a failure."""
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
    else:
        from sslperf.report.terminal import print_run

        print_run(run, console, metric, details)
    if refuse:
        refuse_nothing_measured(run, stored)


def refuse_nothing_measured(run, stored: bool = True) -> None:
    from sslperf.errors import NothingMeasured

    failed = [m for m in run.measurements if m.status not in ("ok", "n/a")]
    if not failed or any(m.status == "ok" for m in run.measurements):
        return
    first = failed[0]
    kept = (f"The run is kept as {run.id} with each case's reason (`sslperf runs show {run.id}`)." if stored
            else "The run was not stored (--no-store).")
    what = (f"every one of its {len(run.measurements)} results failed" if len(failed) == len(run.measurements)
            else f"{len(failed)} of its {len(run.measurements)} results failed and the others are n/a")
    raise NothingMeasured(f"Nothing was measured: {what}. The first, {first.case} on {first.lib}: "
                          f"{first.reason or 'no reason given'}.", hint=kept)


def list_cases(cases) -> None:
    """`--list`: the case ids, one a line."""
    for case in cases:
        click.echo(case.id)


def write_output(path, text: str, what: str, kept: str | None = None, force: bool = False) -> None:
    """Write `text` to a user's output file (userfiles' rule); a failure (the
    disk filled, the directory went away, a file appeared there since it was
    checked) is one paragraph that says what is kept and where."""
    if str(path) == "-":
        click.echo(text, nl=False)
        return
    try:
        userfiles.write(path, text, force)
    except userfiles.Refused as exc:
        raise SslperfError(f"Cannot write {what} to {path}: {exc.message}",
                           hint=kept or exc.hint) from None
    except OSError as exc:
        raise SslperfError(f"Cannot write {what} to {path}: {userfiles.why(exc, path)}.",
                           hint=kept or "Choose another place with --out.") from None




def kept_hint(run, no_store: bool, held: bool = True) -> str:
    """Where the run is still to be had when --out cannot be written (`held`: the store has all of it)."""
    if no_store or not held:
        return (f"The run was not stored ({'--no-store' if no_store else 'the store refused it: see its warnings'}); "
                "run it again with another --out.")
    return (f"The run is kept in the store as run {run.id}: `sslperf runs export {run.id} --out FILE` writes it "
            "elsewhere.")


def held(run, store) -> bool:
    """Whether `store` (None: --no-store) has every row of `run`: only then is it said to be stored."""
    return store is not None and store.holds(run.id)


def refuse_unstored(run, store) -> None:
    """Said last, once the run is delivered (the tables or the JSON hold every figure): a run measured into
    `store` (None: --no-store, nothing to say) that the store does not hold whole is an error, so that no one
    and no script takes it for kept."""
    if store is not None and not store.holds(run.id):
        why = store.lost(run.id) or "its rows were not all written."
        raise SslperfError(f"Run {run.id} was measured, but the results store {store.shown_url()} does not hold "
                           f"all of it: {why}", hint="Every figure is in the output above; keep it with --out or "
                           "--json, or measure again once the store can be written.")


def deliver(run, console, metric: str, as_json: bool, out, force: bool, no_store: bool, summary: str,
            details: bool = False, store=None) -> None:
    """A measured run to the user: --out written first (if that fails, the tables are printed before the error,
    so no figure is lost), then the tables and `summary` or the JSON, then the refusal of a run that `store`
    (None with `no_store`) could not keep whole or that measured nothing."""
    kept = held(run, store)
    if out:
        try:
            write_output(out, run.to_json(), "the run", kept_hint(run, no_store, kept), force)
        except Exception:
            if not as_json:
                show(run, False, console, metric, refuse=False, details=details)
            raise
    if as_json:
        show(run, True, console, metric, refuse=False)
    else:
        show(run, False, console, metric, refuse=False, details=details)
        console.print(f"[dim]{escape(summary)}" + (f"; stored as run {escape(run.id)}" if kept else "")
                      + (f"; JSON written to {escape(str(out))}" if out else "") + "[/dim]")
    refuse_unstored(run, None if no_store else store)
    refuse_nothing_measured(run, kept)


def measure(ctx: click.Context, command: str, console, err_console, metric: str = "wall"):
    """The one way a measuring command runs: its parsed options become its request (measure.verbs), --list lists
    the cases, else the scheduler runs it with progress shown and the run is delivered (and returned)."""
    from sslperf.measure import verbs

    p = ctx.params
    request = verbs.from_params(command, p)
    if p.get("list_only"):
        for case_id in request.cases:
            click.echo(case_id)
        return None
    return deliver_request(ctx, request, console, err_console, metric, p.get("as_json", False), p.get("out"),
                           p.get("force", False), p.get("no_store", False), p.get("details", False))


def deliver_request(ctx: click.Context, request, console, err_console, metric: str, as_json: bool, out, force: bool,
                    no_store: bool, details: bool = False):
    """Run `request` with progress shown (on a terminal a bar, off one a line at least every 30 s) and deliver the
    run; the run."""
    import time

    from sslperf.cli.progress import steps

    started = time.monotonic()
    store = store_unless(ctx, no_store)
    with steps(err_console if as_json else console, "compiling the harness", prefix=False) as progress:
        run = request.run(store, progress,
                          on_build=lambda what: progress.phase(f"building {what}"), build_progress=progress)
    deliver(run, console, metric, as_json, out, force, no_store,
            f"{plural(len(request.cases), 'case')} × {plural(len(run.libs), 'library')} "
            f"in {time.monotonic() - started:.0f} s", details, store)
    return run

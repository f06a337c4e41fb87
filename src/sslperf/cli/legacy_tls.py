"""The spellings `sslperf tls` had before its subcommands (`--loopback`, `--quic`, `--threads`, `--memory`,
`--transfer` and their pairs), read as the subcommand they meant, so that scripts keep working; the new spelling
is said once. Options the subcommand does not take are dropped and named (e.g. `--time` of a loopback run, which
never used it); `--samples` of a mode measured in rounds becomes its rounds, as it did."""

from __future__ import annotations

import math

import click

# The old flags that chose the measurement; what each subcommand takes, and which options take a value, are read
# from the subcommands' own click declarations (options declared once: no second table to drift from them).
MODE_FLAGS = ("--loopback", "--quic", "--memory", "--transfer")
OLD_VALUED = {"--threads"}          # `--threads 1,2` chose the threads measurement and its counts


def _declared(commands: dict[str, click.Command]) -> tuple[dict[str, set[str]], set[str]]:
    """(each subcommand's option spellings, the spellings that take a value) as the subcommands declare them."""
    takes = {sub: {o for p in command.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
             for sub, command in commands.items()}
    valued = {o for command in commands.values() for p in command.params
              if isinstance(p, click.Option) and not p.is_flag and not p.count for o in p.opts}
    return takes, valued | OLD_VALUED


def translate(args: list[str], commands: dict[str, click.Command]) -> tuple[list[str], str | None]:
    """(the arguments as the subcommand reads them, the note to print once) — unchanged, with no note, when they
    already name a subcommand or use none of the old flags. `commands`: tls's subcommands by name."""
    if args and args[0] in commands:
        return args, None
    takes, valued = _declared(commands)
    if not any(a in MODE_FLAGS or a == "--threads" for a in args):
        _refuse_others_options(_pairs(args, valued), takes)
        return args, None
    pairs = _pairs(args, valued)
    flags = {name for name, _ in pairs}
    _refuse_pairs(flags)
    sub, extra = _subcommand(flags, pairs)
    kept, dropped = [], []
    for name, value in pairs:
        if name in MODE_FLAGS and not (name == "--transfer" and sub == "threads") or name == "--threads" and sub == "quic":
            continue
        if name == "--samples" and "--rounds" in takes[sub] and sub != "transfer" or \
                name == "--samples" and sub == "transfer" and "--tcp" in extra:
            kept += ["--rounds", str(_rounds(sub, value))]
            continue
        if name not in takes[sub]:
            dropped.append(name)
            continue
        kept += [name] + ([value] if value is not None else [])
    if sub in ("loopback", "quic") and "--requests" in flags and "--rounds" not in kept:
        kept += ["--rounds", "1"]           # --requests was every GET of the run; now it is a round's
    new = [sub, *extra, *kept]
    note = f"`sslperf tls {' '.join(args)}` is now spelled `sslperf tls {' '.join(new)}`"
    if dropped:
        note += f" ({', '.join(dict.fromkeys(dropped))} did not apply to it and {'was' if len(dropped) == 1 else 'were'} dropped)"
    return new, note + "; the old spelling will go."


def _pairs(args: list[str], valued: set[str]) -> list[tuple[str, str | None]]:
    pairs, i = [], 0
    while i < len(args):
        name = args[i]
        if "=" in name and name.startswith("--"):
            name, value = name.split("=", 1)
            pairs.append((name, value))
        elif name in valued and i + 1 < len(args):
            pairs.append((name, args[i + 1]))
            i += 1
        else:
            pairs.append((name, None))
        i += 1
    return pairs


def _refuse_others_options(pairs, takes: dict[str, set[str]]) -> None:
    """An option of another subcommand given to the default one (`tls --client curl`): say whose it is."""
    from sslperf.errors import SslperfError

    for name, _ in pairs:
        owners = [sub for sub, taken in takes.items() if name in taken]
        if name.startswith("--") and owners and "handshake" not in owners:
            raise SslperfError(f"{name} belongs to `sslperf tls {owners[0]}`"
                               + (f" (and {', '.join(owners[1:])})" if len(owners) > 1 else "")
                               + "; `sslperf tls` alone measures handshakes in memory.",
                               hint=f"e.g. `sslperf tls {owners[0]} {name} …`; `sslperf tls {owners[0]} --help` "
                                    "lists its options.")


def _refuse_pairs(flags: set[str]) -> None:
    """The old flags that were two measurements at once were refused; they still are."""
    from sslperf.errors import SslperfError

    chosen = [f for f in ("--loopback", "--quic", "--threads", "--memory") if f in flags]
    if "--quic" in flags:           # --quic --threads (N clients at once) and --quic --memory were one measurement
        chosen = [f for f in chosen if f not in ("--threads", "--memory")]
    if "--transfer" in flags and "--memory" in flags:
        chosen = ["--transfer", "--memory"]
    if len(chosen) > 1:
        raise SslperfError(f"{' and '.join(chosen)} are different measurements; give one of them.",
                           hint="Run them one after the other (`sslperf tls --help` lists the subcommands).")


def _subcommand(flags: set[str], pairs) -> tuple[str, list[str]]:
    """The subcommand the old flags chose, and the flags of its own they become."""
    threads = dict(pairs).get("--threads")
    if "--quic" in flags:
        extra = ["--transfer"] if "--transfer" in flags else ["--memory"] if "--memory" in flags else \
            ["--clients", threads] if threads else []
        return "quic", extra
    if "--loopback" in flags and "--transfer" in flags:
        return "transfer", ["--tcp"]
    for flag, sub in (("--loopback", "loopback"), ("--memory", "memory"), ("--threads", "threads"),
                      ("--transfer", "transfer")):
        if flag in flags:
            return sub, []
    return "handshake", []


def _rounds(sub: str, samples: str | None) -> int:
    """--samples as the rounds the old spelling made of it: a third for threads and loopback, half for transfers."""
    try:
        n = int(samples or 0)
    except ValueError:
        return 3
    return max(3, math.floor(n / (2 if sub in ("transfer", "quic") else 3)))

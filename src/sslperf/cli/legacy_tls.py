"""The spellings `sslperf tls` had before its subcommands (`--loopback`, `--quic`, `--threads`, `--memory`,
`--transfer` and their pairs), read as the subcommand they meant, so that scripts keep working; the new spelling
is said once. Options the subcommand does not take are dropped and named (e.g. `--time` of a loopback run, which
never used it); `--samples` of a mode measured in rounds becomes its rounds, as it did."""

from __future__ import annotations

import math

# Flags that chose the measurement, and the options that took a value (to walk the arguments).
MODE_FLAGS = ("--loopback", "--quic", "--memory", "--transfer")
VALUED = {"--lib", "-l", "--filter", "--time", "--samples", "--metric", "--out", "--case", "--path", "--requests",
          "--client", "--curl", "--server-lib", "--threads", "--thread-seconds", "--thread-mode", "--connections",
          "--provider", "--fips-module", "--cpu", "--processes"}
# What each subcommand takes (the rest is dropped and said).
TAKES = {
    "handshake": {"--lib", "-l", "--filter", "--time", "--samples", "--metric", "--json", "--out", "--force",
                  "--no-store", "--quick", "--full", "--case", "--list", "--provider", "--fips-module", "--cpu",
                  "--no-pin", "--fixed-layout", "--processes"},
    "loopback": {"--lib", "-l", "--filter", "--case", "--list", "--requests", "--rounds", "--client", "--curl",
                 "--server-lib", "--json", "--out", "--force", "--no-store", "--provider", "--fips-module"},
    "memory": {"--lib", "-l", "--filter", "--case", "--list", "--connections", "--json", "--out", "--force",
               "--no-store", "--provider", "--fips-module"},
    "threads": {"--lib", "-l", "--filter", "--case", "--list", "--threads", "--thread-seconds", "--thread-mode",
                "--transfer", "--rounds", "--json", "--out", "--force", "--no-store", "--provider", "--fips-module"},
    "quic": {"--lib", "-l", "--filter", "--case", "--list", "--requests", "--rounds", "--path", "--transfer",
             "--time", "--memory", "--connections", "--clients", "--server-lib", "--json", "--out", "--force",
             "--no-store"},
}
TAKES["transfer"] = TAKES["handshake"] | {"--tcp", "--rounds"}


def translate(args: list[str], subcommands: list[str]) -> tuple[list[str], str | None]:
    """(the arguments as the subcommand reads them, the note to print once) — unchanged, with no note, when they
    already name a subcommand or use none of the old flags."""
    if args and args[0] in subcommands:
        return args, None
    if not any(a in MODE_FLAGS or a == "--threads" for a in args):
        _refuse_others_options(args)
        return args, None
    pairs = _pairs(args)
    flags = {name for name, _ in pairs}
    _refuse_pairs(flags)
    sub, extra = _subcommand(flags, pairs)
    kept, dropped = [], []
    for name, value in pairs:
        if name in MODE_FLAGS and not (name == "--transfer" and sub == "threads") or name == "--threads" and sub == "quic":
            continue
        if name == "--samples" and "--rounds" in TAKES[sub] and sub != "transfer" or \
                name == "--samples" and sub == "transfer" and "--tcp" in extra:
            kept += ["--rounds", str(_rounds(sub, value))]
            continue
        if name not in TAKES[sub]:
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


def _pairs(args: list[str]) -> list[tuple[str, str | None]]:
    pairs, i = [], 0
    while i < len(args):
        name = args[i]
        if "=" in name and name.startswith("--"):
            name, value = name.split("=", 1)
            pairs.append((name, value))
        elif name in VALUED and i + 1 < len(args):
            pairs.append((name, args[i + 1]))
            i += 1
        else:
            pairs.append((name, None))
        i += 1
    return pairs


def _refuse_others_options(args: list[str]) -> None:
    """An option of another subcommand given to the default one (`tls --client curl`): say whose it is."""
    from sslperf.errors import SslperfError

    for name, _ in _pairs(args):
        owners = [sub for sub, takes in TAKES.items() if name in takes]
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

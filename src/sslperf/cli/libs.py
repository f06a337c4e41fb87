"""`sslperf libs …`: the library matrix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from sslperf.cli.progress import steps
from sslperf.cli.common import make_console, plural
from sslperf.cli.options import out_file_option
from sslperf.errors import SslperfError
from sslperf.libs import build as builder
from sslperf.libs import bundle, describe, installed, loader, releases, variants

console = make_console()
err_console = make_console(stderr=True)


@click.group()
def libs() -> None:
    """Build, list and inspect the crypto libraries to measure.

    Names look like `openssl-3.3` (the newest 3.3.x), `openssl-1.1.1w`,
    `openssl-3.3+minimal+Os` (variants joined with +), `boringssl`, `aws-lc`
    and `system` (the OpenSSL the OS ships).
    """


@libs.command("available")
@click.argument("flavors", nargs=-1, type=click.Choice(sorted(releases.FLAVORS)))
@click.option("--refresh", is_flag=True, help="Re-read the crates.io index now instead of the cached copy.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def available(flavors: tuple[str, ...], refresh: bool, as_json: bool) -> None:
    """Versions the sources offer (openssl-src, boring-sys, aws-lc-sys on crates.io)."""
    chosen = flavors or tuple(releases.FLAVORS)
    built = {(lib.flavor, lib.version) for lib in installed.built_libs()}
    listing = {flavor: releases.offered(flavor, refresh=refresh) for flavor in chosen}
    if as_json:
        click.echo(json.dumps({f: [{"version": r.version, "origin": r.origin, "sha256": r.digest,
                                    "built": (f, r.version) in built} for r in rs]
                               for f, rs in listing.items()}, indent=2))
        return
    table = Table(title="Library versions on offer (bold: newest of its series; ✓ built)")
    for column in ("flavor", "series", "versions", "source"):
        table.add_column(column)
    for flavor, found in listing.items():
        for key, members in releases.by_series(flavor, found).items():
            labels = []
            for i, release in enumerate(members):
                label = escape(release.version) + (" ✓" if (flavor, release.version) in built else "")
                labels.append(f"[bold]{label}[/]" if i == len(members) - 1 else label)
            table.add_row(flavor, key, ", ".join(labels), releases.FLAVORS[flavor].crate)
    console.print(table)
    console.print("BoringSSL and AWS-LC have no release numbers on crates.io: their version here is the "
                  "boring-sys / aws-lc-sys crate version (`sslperf libs info` shows what the library reports).")


@libs.command("variants")
def list_variants() -> None:
    """Build variants and what each one sets."""
    table = Table(title="Build variants (combine with +, e.g. openssl-3.3+nistp+minimal+Os)")
    table.add_column("variant")
    table.add_column("what it does")
    table.add_column("applies to")
    for variant in variants.VARIANTS.values():
        table.add_row(variant.name, variant.summary, variants.applies_to(variant))
    console.print(table)
    console.print(f"minimal disables: {' '.join(variants.MINIMAL_DISABLE)} "
                  "(options a version's Configure does not know are skipped and listed by `libs info`).")


@libs.command("build")
@click.argument("names", nargs=-1)
@click.option("--variant", "-V", "extra_variants", multiple=True,
              help="Add a variant (repeatable); same as +VARIANT in the name. See `sslperf libs variants`.")
@click.option("--configure-opt", multiple=True, help="Extra Configure option (OpenSSL) or -D setting (CMake).")
@click.option("--cflags", default="", help="Extra compiler flags, e.g. '-march=native'.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=os.cpu_count() or 1, show_default=True,
              help="Parallel compile jobs.")
@click.option("--source-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Build an unpacked source tree instead of a crates.io release.")
@click.option("--tarball", help="Build a release tarball (file or http(s) URL); needs --sha256.")
@click.option("--sha256", help="The tarball's published sha256.")
@click.option("--git", "git_url", help="Build a git repository at --tag.")
@click.option("--tag", help="The git tag (or branch) to build.")
@click.option("--name", "custom_name", help="Name for the result (default: FLAVOR-VERSION+VARIANTS).")
@click.option("--force", is_flag=True, help="Rebuild even when the cache has this build.")
def build_cmd(names, extra_variants, configure_opt, cflags, jobs, source_dir, tarball, sha256, git_url, tag,
              custom_name, force) -> None:
    """Build libraries into the cache (a cached build returns at once).

    \b
    Examples:
      sslperf libs build openssl-1.1.1w openssl-3.0 openssl-3.6 openssl-4.0
      sslperf libs build openssl-3.3+minimal+Os
      sslperf libs build boringssl aws-lc
      sslperf libs build --tarball openssl-3.4.1.tar.gz --sha256 HEX
    """
    requests = builder.requests(names, extra_variants, list(configure_opt), cflags.split(), jobs,
                                source_dir, tarball, sha256, git_url, tag, custom_name)
    for request in requests:
        with steps(console, f"building {builder.lib_name(request)}") as progress:
            outcome = builder.build(request, progress, force=force)
        lib = outcome.lib
        if outcome.cache_hit:
            console.print(f"[green]✓[/] {escape(lib.name)}: cached build ({outcome.seconds:.2f} s) — "
                          f"{escape(lib.version_string)}, {escape(str(lib.home))}")
        else:
            console.print(f"[green]✓[/] {escape(lib.name)}: built in {outcome.seconds:.0f} s — "
                          f"{escape(lib.version_string)}, {escape(str(lib.home))}")
        skipped = lib.info.get("skipped_options")
        if skipped:
            console.print(f"  options this version does not know, skipped: {escape(' '.join(skipped))}")


@libs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cmd(as_json: bool) -> None:
    """Libraries in hand: the system OpenSSL, built ones and registered prefixes."""
    found = installed.all_libs()
    for damaged in installed.damaged_builds():      # said on stderr: the JSON on stdout stays the list
        err_console.print(f"[yellow]warning:[/] {escape(str(damaged))}")
    if as_json:
        click.echo(json.dumps([describe.record(lib, with_footprint=False) for lib in found], indent=2))
        return
    table = Table(title="Libraries in hand")
    for column in ("name", "kind", "reports itself as", "variant", "linkage", "location"):
        table.add_column(column)
    for lib in found:
        where = str(lib.home or lib.prefix or ", ".join(lib.info.get("shared_objects", {}).values()))
        linkage = " + ".join(loader.linkages(lib)) or "?"
        table.add_row(escape(lib.name), escape(lib.kind), escape(lib.version_string), escape(lib.variant_label),
                      linkage, escape(where))
    console.print(table)
    if not any(lib.kind == "system" for lib in found):
        console.print("No system OpenSSL found (install libssl-dev and pkg-config to measure it).")


@libs.command("info")
@click.argument("names", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def info_cmd(names: tuple[str, ...], as_json: bool) -> None:
    """Build facts and footprint of libraries, side by side; sizes of the second
    and later libraries are compared with the first.

    \b
    Example (the tuning talk's "minimal build is 33% smaller"):
      sslperf libs info openssl-3.3+nistp openssl-3.3+nistp+minimal+Os
    """
    found = [installed.find(name) for name in names]
    records = [describe.record(lib) for lib in found]
    if as_json:
        click.echo(json.dumps(records, indent=2))
        return
    table = Table(title="Library facts and footprint", show_lines=False)
    table.add_column("")
    for record in records:
        table.add_column(escape(record["name"]), overflow="fold")

    def row(label: str, values: list) -> None:
        if any(v not in (None, "", [], {}) for v in values):
            table.add_row(label, *[escape(_text(v)) for v in values])

    row("flavor", [r["flavor"] for r in records])
    row("reports itself as", [r["version_string"] for r in records])
    row("variant", [r["variant"] for r in records])
    row("origin", [r["origin"] for r in records])
    row("configure options", [" ".join(r["configure_options"] or []) for r in records])
    row("skipped (unknown to version)", [" ".join(r["skipped_options"] or []) for r in records])
    row("extra compiler flags", [" ".join(r["cflags"] or []) for r in records])
    row("cmake settings", [" ".join(r["cmake_settings"] or []) for r in records])
    row("compiler", [(r["compiler"] or {}).get("cc", "").split(" | ")[1:2] for r in records])
    row("build time", [_build_time(r) for r in records])
    row("built at", [r["built_at"] for r in records])
    row("tools", [", ".join(f"{k}: {v}" for k, v in (r["tools"] or {}).items()) for r in records])
    row("libraries", [", ".join(sorted(set(r["footprint"]["kinds"].values()))) for r in records])
    base = records[0]["footprint"]
    for key, label in describe.FOOTPRINT_FIGURES:
        values = []
        for i, record in enumerate(records):
            value = record["footprint"]["figures"].get(key)
            text = "" if value is None else f"{value:,} B"
            if i > 0 and value is not None and describe.comparable(base, record["footprint"], key):
                text += f" ({describe.change(value, base['figures'].get(key))})"
            values.append(text)
        row(label, values)
    row("minimal program linkage", [r["footprint"]["program_linkage"] for r in records])
    console.print(table)


def _text(value) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _build_time(record: dict) -> str:
    seconds = record.get("build_seconds")
    if seconds is None:
        return ""
    phases = record.get("phase_seconds") or {}
    detail = ", ".join(f"{k} {v:.0f} s" for k, v in phases.items() if v >= 0.5)
    return f"{seconds:.0f} s" + (f" ({detail})" if detail else "")


@libs.command("export")
@click.argument("names", nargs=-1, required=True)
@out_file_option("The bundle file to write (a .tar.gz).")
def export_cmd(names: tuple[str, ...], out: Path | None, force: bool) -> None:
    """Pack built libraries into one file that `sslperf libs import` installs on
    another machine (same architecture, the same or a newer C library).

    \b
    Example:
      sslperf libs export openssl-1.1.1w openssl-3.6 --out libs.tar.gz
    """
    if out is None:
        raise SslperfError("Name the bundle file to write with --out, e.g. `--out libs.tar.gz`.")
    index = bundle.export([installed.find(name) for name in names], out, force=force)
    size = out.stat().st_size
    console.print(f"[green]✓[/] wrote {escape(str(out))} ({size / 1e6:.1f} MB): "
                  f"{escape(', '.join(entry['name'] for entry in index['libs']))}")


@libs.command("import")
@click.argument("file")
def import_cmd(file: str) -> None:
    """Install the libraries of a bundle that `sslperf libs export` wrote (`-`:
    standard input). Everything in it is checked before anything is installed;
    a library whose build is already in hand is kept."""
    found = bundle.install(click.get_binary_stream("stdin") if file == "-" else Path(file))
    for lib in found:
        if bundle.was_in_hand(lib):
            console.print(f"= {escape(lib.name)}: already in hand (the same build), kept — {escape(str(lib.home))}")
            continue
        console.print(f"[green]✓[/] {escape(lib.name)}: installed — {escape(lib.version_string)}, "
                      f"{escape(str(lib.home))}")
        moved = lib.info.get("relocated") or {}
        if moved.get("rewritten") or moved.get("patched") or moved.get("kept"):
            console.print(f"  built at another place: {plural(len(moved['rewritten']), 'text file')} rewritten and "
                          f"{plural(len(moved['patched']), 'binary')} patched to name {escape(moved['to'])}"
                          + (f"; the old path, shorter than the new one, stays in {plural(len(moved['kept']), 'binary')} "
                             f"({escape(', '.join(moved['kept']))}): the default openssl.cnf, CA and module "
                             "directories they name, which sslperf's measurements do not use" if moved["kept"] else ""))


@libs.command("add")
@click.argument("name")
@click.option("--prefix", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Install prefix holding include/openssl and lib/ (or lib64/).")
def add_cmd(name: str, prefix: Path) -> None:
    """Register an installed library (e.g. a distro's or your own build) under NAME."""
    lib = installed.register(name, prefix)
    console.print(f"[green]✓[/] registered {escape(lib.name)}: {escape(lib.version_string)} at "
                  f"{escape(str(lib.prefix))}")


@libs.command("remove")
@click.argument("names", nargs=-1, required=True)
@click.pass_context
def remove_cmd(ctx, names: tuple[str, ...]) -> None:
    """Delete built libraries from the cache, or forget registered ones (exact names only)."""
    from sslperf.cli.common import open_store

    for name in names:
        lib = installed.remove(name)
        console.print(f"removed {escape(lib.name)}" + (f" ({escape(str(lib.home))})" if lib.home else ""))
        runs = [row["id"] for row in open_store(ctx).list() if lib.name in row["libs"]]
        if runs:
            console.print(f"  {len(runs)} stored run(s) measured it ({escape(', '.join(runs[:3]))}"
                          f"{' …' if len(runs) > 3 else ''}); "
                          "they are kept and stay readable, but cannot measure it again until it is rebuilt")
        siblings = [other.name for other in installed.built_libs()
                    if other.flavor == lib.flavor and other.version == lib.version]
        if siblings:
            console.print(f"  other builds of {escape(lib.flavor)} {escape(lib.version)} are kept: "
                          f"{escape(', '.join(siblings))}")

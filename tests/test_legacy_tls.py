"""The old `sslperf tls --loopback …` spellings are read from the subcommands' own click declarations (issue 53:
options declared once), so an option a subcommand gains is taken, and one that takes a value keeps it."""

from __future__ import annotations

import click
import pytest

from sslperf.cli import get_verb, legacy_tls
from sslperf.errors import SslperfError


def test_an_old_spelling_becomes_the_subcommand_with_its_values():
    commands = get_verb("tls").commands
    new, note = legacy_tls.translate(["--loopback", "--rounds", "2", "--requests", "5", "--time", "9"], commands)
    # --rounds takes a value (the old hand-written table had it as a flag and lost the 2); --time does not apply
    assert new == ["loopback", "--rounds", "2", "--requests", "5"], new
    assert "`sslperf tls loopback --rounds 2 --requests 5`" in note and "--time did not apply" in note


def test_what_a_subcommand_takes_is_what_it_declares():
    """A made-up subcommand with an option of its own: the translation keeps it with no table edited."""
    declared = click.Command("memory", params=[click.Option(["--brand-new"], type=int), click.Option(["--json"],
                                                                                                    is_flag=True)])
    new, _ = legacy_tls.translate(["--memory", "--brand-new", "7", "--json", "--quick"], {"memory": declared})
    assert new == ["memory", "--brand-new", "7", "--json"]


def test_another_subcommands_option_on_the_default_one_names_its_owner():
    with pytest.raises(SslperfError, match=r"--client belongs to `sslperf tls loopback`"):
        legacy_tls.translate(["--client", "curl"], get_verb("tls").commands)

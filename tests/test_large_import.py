"""Large imports (bench/large_import.py times them): the store writes a run's
results in one batch and reads them back in one query, on SQLite and
PostgreSQL alike, and `runs show` draws a table of thousands of rows line by
line (report.long_table) with the same text as rich's Table. The inputs are
the bench's: a real wolfCrypt capture's rows repeated with numbered names.
Counts and text are asserted here, never a time."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from fakes import bench_module
import sqlalchemy as sa
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sslperf import importers, stats
from sslperf.report import long_table, terminal
from sslperf.store import Store


# One PostgreSQL server for the module (conftest's postgres_url): its tests go to one worker.
pytestmark = pytest.mark.xdist_group("postgres")


bench = bench_module("large_import")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return Store(f"sqlite:///{tmp_path / 'runs.db'}")
    store = Store(request.getfixturevalue("postgres_url"))
    for row in store.list():          # one server for the session: start each test empty
        store.delete(row["id"])
    return store


def statements(store: Store) -> list[tuple[str, bool]]:
    """(statement, executemany) of every statement the store's engine runs from now on."""
    seen: list[tuple[str, bool]] = []
    sa.event.listen(store.engine, "before_cursor_execute",
                    lambda conn, cursor, statement, parameters, context, executemany:
                    seen.append((" ".join(statement.split()), executemany)))
    return seen


@pytest.mark.parametrize("rows", [10, 3000])
def test_a_run_is_written_in_one_batch_and_read_in_one_query(store, rows):
    run = importers.parse(bench.wolfcrypt_text(1000 + rows * 110), source_name="wolfcrypt-large.txt")
    count = len(run.measurements)
    assert count >= rows
    seen = statements(store)
    store.save(run, run.settings["source"])
    inserts = [many for statement, many in seen if statement.startswith("INSERT INTO measurements")]
    # SQLite: the driver's executemany, one statement; PostgreSQL: SQLAlchemy's batches of up to 1,000 rows
    assert 1 <= len(inserts) <= 1 + count // 1000, (count, len(inserts))
    seen.clear()
    loaded = store.load(run.id)
    reads = [s for s, _ in seen if s.startswith("SELECT") and "FROM measurements" in s]
    assert len(reads) == 1, reads
    assert [(m.case, m.reported_rates, m.figures, m.note) for m in loaded.measurements] == \
        [(m.case, m.reported_rates, m.figures, m.note) for m in run.measurements]
    assert [m.ops for m in loaded.measurements] == [[]] * count


def console(color: bool) -> Console:
    return Console(file=io.StringIO(), width=300, color_system="truecolor" if color else None, force_terminal=color,
                   highlight=False, soft_wrap=True, emoji=False)


@pytest.mark.parametrize("made", ["wolfcrypt", "gbench"])
@pytest.mark.parametrize("color", [True, False])
def test_runs_show_draws_a_long_table_as_richs_table_would(made, color):
    # runs of more than LONG rows a table (wolfCrypt's `other` operations; Google Benchmark's threads table too),
    # drawn by print_run with LongTable, and with rich's Table throughout
    text = (bench.wolfcrypt_text(1000 + (long_table.LONG + 300) * 110) if made == "wolfcrypt" else
            bench.gbench_json(2000))
    run = importers.parse(text, source_name=f"{made}-large")

    def shown(long_from: int) -> str:
        out = console(color)
        saved, terminal.LONG = terminal.LONG, long_from
        try:
            terminal.print_run(run, out)
        finally:
            terminal.LONG = saved
        return out.file.getvalue()

    drawn, by_rich = shown(long_table.LONG), shown(10**9)
    assert drawn.count("\n") > long_table.LONG
    assert drawn == by_rich if not color else _unstyled(drawn) == _unstyled(by_rich)


def _unstyled(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.parametrize("color", [True, False])
def test_long_table_draws_cells_of_several_lines_and_styles_as_rich_does(color):
    tables = [Table(title="[b]group[/b] (µs)", title_justify="left", caption="★: the caption", caption_justify="left"),
              long_table.LongTable("[b]group[/b] (µs)", "★: the caption")]
    for table in tables:
        table.add_column("case [mode]")
        table.add_column(Text("lib[/x]"), justify="right")
        table.add_column("centred", justify="center")
    for i in range(4):
        value = Text("3,490 op/s", style="bold green")
        value.append(" (one figure)", style="dim")
        value.append(f"\n{i} µs / {i * 7} µs" * (i % 3), style="dim")
        for table in tables:
            table.add_row(Text(f"rsa-{i} [sign]"), value.copy(), "x" * i)
    drawn = []
    for table in tables:
        out = console(color)
        out.print(table)
        drawn.append(out.file.getvalue())
    assert drawn[0].count("\n") == 4 + (1 + 2 + 3 + 1) + 2        # title and head, the rows' lines, foot and caption
    assert drawn[1] == drawn[0] if not color else _unstyled(drawn[1]) == _unstyled(drawn[0])


def test_one_figure_and_a_cached_rank_give_the_same_statistics():
    for value in (1.0, 3.25e-7, 123456.789, 9.99e14):
        one = stats.describe([value])
        assert (one.min, one.max, one.mean, one.median, one.p95, one.p99, one.sum, one.ci_low, one.ci_high) == \
            (value,) * 9 and one.stdev == 0.0 and one.n == 1
        assert one.median == float(np.median([value])) and one.p99 == float(np.percentile([value], 99))
    # the order statistics of the median's 95% interval (the binomial table), asked twice: once computed, once cached
    for n, ranks in ((5, (1, 5)), (6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (30, (10, 21))):
        for _ in range(2):
            assert stats.median_ci(list(range(1, n + 1))) == ranks

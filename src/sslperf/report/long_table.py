"""A table of many rows (an import of 80,000 results), drawn line by line.
rich's Table lays out, wraps and crops every cell on its own, about 0.2 ms a
row: 20 s for 80,000 rows. This one looks the same as rich's default table
(heavy head, the title above and the caption below, each column as wide as
its widest line, one space of padding, a cell of several lines top-aligned)
and costs a few microseconds a row; it does not wrap, so a row wider than the
terminal runs on as the console's other soft-wrapped lines do. It reads what
rich's Table reads, alike: a string (title, caption, header, cell) is rich
markup, a Text is shown as it is."""

from __future__ import annotations

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

LONG = 1000         # rows from which a table is drawn here instead of by rich's Table


class LongTable:
    def __init__(self, title: str | Text | None = None, caption: str | Text | None = None,
                 title_justify: str = "left", caption_justify: str = "left"):
        self.title, self.caption = title, caption
        self.title_justify, self.caption_justify = title_justify, caption_justify
        self.headers: list[Text] = []
        self.justify: list[str] = []
        self.rows: list[list[Text]] = []

    @classmethod
    def like(cls, table: Table) -> LongTable:
        """An empty LongTable with the title, caption and columns of rich's `table` (its rows are not copied)."""
        long = cls(table.title, table.caption, table.title_justify, table.caption_justify)
        for column in table.columns:
            long.add_column(column.header, column.justify)
        return long

    def add_column(self, header: str | Text, justify: str = "left") -> None:
        self.headers.append(_text(header))
        self.justify.append(justify)

    def add_row(self, *cells: str | Text) -> None:
        texts = [_text(cell) for cell in cells]
        if not any("\n" in text.plain for text in texts):
            self.rows.append(texts)
            return
        lines = [text.split("\n", allow_blank=True) for text in texts]     # each line of the row, cells top-aligned
        for i in range(max(len(cell) for cell in lines)):
            self.rows.append([cell[i] if i < len(cell) else Text("") for cell in lines])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lengths = [[cell.cell_len for cell in row] for row in self.rows]
        widths = [max([header.cell_len, *(row[i] for row in lengths)]) + 2 for i, header in enumerate(self.headers)]
        table_width = sum(widths) + len(widths) + 1
        frame = box.HEAVY_HEAD.substitute(options, safe=console.safe_box)
        annotation = options.update(width=table_width, height=None)
        if self.title:
            yield from console.render(_annotation(console, self.title, "table.title"),
                                      annotation.update(justify=self.title_justify))
        header_style = console.get_style("table.header")
        new_line = Segment.line()
        yield Segment(frame.get_top(widths))
        yield new_line
        yield from self._header(console, widths, (frame.head_left, frame.head_vertical, frame.head_right),
                                header_style)
        yield Segment(frame.get_row(widths, "head", edge=True))
        yield new_line
        sides = (frame.mid_left, frame.mid_vertical, frame.mid_right)
        styles: dict = {}
        for row, row_lengths in zip(self.rows, lengths):
            if console.color_system is None:          # no styles are drawn (a pipe, a file): the row as one string
                yield Segment(self._plain_line(row, row_lengths, widths, sides))
                yield new_line
            else:
                yield from self._line(console, row, row_lengths, widths, sides, styles)
        yield Segment(frame.get_bottom(widths))
        yield new_line
        if self.caption:
            yield from console.render(_annotation(console, self.caption, "table.caption"),
                                      annotation.update(justify=self.caption_justify))

    def _header(self, console: Console, widths: list[int], sides: tuple[str, str, str], style: Style) -> RenderResult:
        """The header line, each name justified as rich's Table does (the spaces part of the styled name)."""
        left, vertical, right = sides
        for i, (header, width, justify) in enumerate(zip(self.headers, widths, self.justify)):
            yield Segment(left if i == 0 else vertical)
            name = header.copy()
            name.align(justify, width - 2)
            yield Segment(" ", style)
            yield from Segment.apply_style(name.render(console, end=""), style)
            yield Segment(" ", style)
        yield Segment(right)
        yield Segment.line()

    def _plain_line(self, cells: list[Text], lengths: list[int], widths: list[int], sides: tuple[str, str, str]
                    ) -> str:
        """One row as _line draws it, without its styles."""
        left, vertical, right = sides
        out = []
        for i, (cell, length, width, justify) in enumerate(zip(cells, lengths, widths, self.justify)):
            gap = width - 2 - length
            lead = gap if justify == "right" else gap // 2 if justify == "center" else 0
            out.append(f"{left if i == 0 else vertical}{' ' * (1 + lead)}{cell.plain}{' ' * (gap - lead + 1)}")
        return "".join(out) + right

    def _line(self, console: Console, cells: list[Text], lengths: list[int], widths: list[int],
              sides: tuple[str, str, str], styles: dict) -> RenderResult:
        """One row: each cell padded to its column's width (one space each side, then justified)."""
        left, vertical, right = sides
        for i, (cell, length, width, justify) in enumerate(zip(cells, lengths, widths, self.justify)):
            gap = width - 2 - length
            lead = gap if justify == "right" else gap // 2 if justify == "center" else 0
            yield Segment((left if i == 0 else vertical) + " " * (1 + lead))
            yield from _segments(console, cell, styles)
            yield Segment(" " * (gap - lead + 1))
        yield Segment(right)
        yield Segment.line()


def _segments(console: Console, text: Text, styles: dict) -> list[Segment]:
    """What Text.render gives for a cell whose styled parts follow one another (as a cell is built: appended
    pieces), at a fraction of its cost; any other Text goes to Text.render. `styles` caches the parsed styles."""
    plain, base = text.plain, _style(console, text.style, styles)
    segments, position = [], 0
    for span in text.spans:
        if span.start < position:                     # overlapping styles: rich's general case
            return list(text.render(console, end=""))
        if span.start > position:
            segments.append(Segment(plain[position:span.start], base))
        if span.end > span.start:
            style = _style(console, span.style, styles)
            segments.append(Segment(plain[span.start:span.end], base + style if base and style else base or style))
        position = max(position, span.end)
    if position < len(plain):
        segments.append(Segment(plain[position:], base))
    return segments


def _style(console: Console, style: str | Style, styles: dict) -> Style | None:
    if not style:
        return None
    if style not in styles:
        styles[style] = console.get_style(style, default="")
    return styles[style] or None


def _annotation(console: Console, text: str | Text, style: str) -> Text:
    """A title or caption as rich's Table renders it: a string is markup in `style`, a Text is as it is."""
    return console.render_str(text, style=style, highlight=False) if isinstance(text, str) else text


def _text(cell: str | Text) -> Text:
    """A cell as Text: a string is markup, as for rich's Table."""
    return cell if isinstance(cell, Text) else Text.from_markup(cell)

"""One table model, two renderings: Markdown here (results_analysis.md, compare, slices,
agreement) and HTML in the report, which embeds the same object and draws it in the page."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Cell = str | int | float | bool | None


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = ""
    columns: list[str]
    rows: list[list[Cell]]
    note: str = ""

    def markdown(self, *, empty: str = "(no data)") -> str:
        """The rows as a Markdown table (no title or note); ``empty`` when there is no row."""
        if not self.rows:
            return empty
        lines = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(_text(cell) for cell in row) + " |" for row in self.rows]
        return "\n".join(lines)


def _text(cell: Cell) -> str:
    return "" if cell is None else str(cell).replace("|", "\\|").replace("\n", " ")

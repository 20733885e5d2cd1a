"""Markdown table lines, as every write-up of the benchmark writes them."""
from typing import Iterable, List, Sequence

ALIGN = {"l": "---", "r": "--:"}


def row(cells: Iterable[str]) -> str:
    """One table row: ``| a | b |``."""
    return "| " + " | ".join(cells) + " |"


def head(columns: Sequence[str], align: str) -> List[str]:
    """A table's header and separator lines; ``align`` has one letter per
    column: ``l`` left (names), ``r`` right (numbers)."""
    if len(align) != len(columns):
        raise ValueError(f"{len(columns)} columns but {len(align)} alignments ({align!r})")
    return [row(columns), row(ALIGN[a] for a in align)]

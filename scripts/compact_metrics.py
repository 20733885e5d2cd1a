"""Rewrite metrics/**/*.json whose match counts are in the earlier list-of-rows
form into the compact one (spacy_imbalance.scorers.counts.MatchCounts.to_sparse);
every other field is kept as it is, and each rewrite is checked to give the same
counts back.

    python scripts/compact_metrics.py            # metrics/
    python scripts/compact_metrics.py --root DIR
"""
from pathlib import Path

import numpy
import srsly
import typer

from spacy_imbalance.scorers.counts import MatchCounts


def main(root: Path = typer.Option(Path("metrics"), "--root", help="Folder searched for metrics JSON files")) -> None:
    rewritten = 0
    for path in sorted(root.rglob("*.json")):
        data = srsly.read_json(path)
        counts = data.get("counts") if isinstance(data, dict) else None
        if not isinstance(counts, dict) or "rows" not in counts:
            continue
        table = MatchCounts.from_sparse(counts)
        data["counts"] = table.to_sparse()
        numpy.testing.assert_array_equal(MatchCounts.from_sparse(data["counts"]).table, table.table)
        srsly.write_json(path, data, indent=0)
        rewritten += 1
    typer.echo(f"{rewritten} metrics files rewritten in the compact form")


if __name__ == "__main__":
    typer.run(main)

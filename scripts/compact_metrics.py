"""Rewrite metrics/**/*.json whose match counts are in the earlier list-of-rows
form into the compact one (spacy_imbalance.scorers.counts.MatchCounts.to_sparse);
every other field is kept as it is, and each rewrite is checked to give the same
counts back.

    python scripts/compact_metrics.py            # metrics/
    python scripts/compact_metrics.py --root DIR
"""
from pathlib import Path

import typer

from bench.records import compact_counts


def main(root: Path = typer.Option(Path("metrics"), "--root", help="Folder searched for metrics JSON files")) -> None:
    rewritten = compact_counts(root)
    typer.echo(f"{rewritten} metrics files rewritten in the compact form")


if __name__ == "__main__":
    typer.run(main)

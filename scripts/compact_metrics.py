"""Rewrite metrics/**/*.json into today's form, every other field kept as it
is: match counts in the earlier list-of-rows form into the compact one
(spacy_imbalance.scorers.counts.MatchCounts.to_sparse; each rewrite checked to
give the same counts back), and run records named by their trial ("wnut17
transformer/ner seed 0", as clones of older code write them) named by their
run ("transformer/ner"), which summaries pool seeds by.

    python scripts/compact_metrics.py            # metrics/
    python scripts/compact_metrics.py --root DIR
"""
from pathlib import Path

import typer

from bench.records import compact_counts, name_runs


def main(root: Path = typer.Option(Path("metrics"), "--root", help="Folder searched for metrics JSON files")) -> None:
    rewritten = compact_counts(root)
    typer.echo(f"{rewritten} metrics files rewritten in the compact form")
    typer.echo(f"{name_runs(root)} run records named by their run")


if __name__ == "__main__":
    typer.run(main)

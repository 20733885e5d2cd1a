"""The label-scopes study's figure of one encoder (bench/scopes_plot.py):
per split, the best built-in and ours on the naive merge, ours with scopes,
and that built-in on the complete train set; test macro-F1, seeds 0-2.

    python scripts/scopes_plot.py cnn metrics/wnut17/scopes_cnn.png
"""
from pathlib import Path

import typer

from bench.scopes_plot import ENCODER_NAMES, write_figure


def main(
    encoder: str = typer.Argument(..., help="cnn or features"),
    output: Path = typer.Argument(..., help="The .png to write"),
    root: Path = typer.Option(Path("."), "--root", help="The project folder whose metrics/ holds the study's runs"),
) -> None:
    if encoder not in ENCODER_NAMES:
        raise typer.BadParameter(f"{encoder!r}: give {' or '.join(ENCODER_NAMES)}", param_hint="ENCODER")
    try:
        write_figure(encoder, root, output)
    except ValueError as err:  # a run of the study missing under --root
        typer.echo(f"error: {err} (under --root {root})", err=True)
        raise typer.Exit(1) from None
    print(f"wrote {output}")


if __name__ == "__main__":
    typer.run(main)

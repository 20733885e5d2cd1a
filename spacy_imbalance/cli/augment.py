from pathlib import Path
from typing import Optional

import typer

from ..corpus.augmentation.augmentation import METHODS, augment_docs
from ._app import app
from .transform import transform_file


@app.command("augment")
def augment_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy file or a CoNLL file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .spacy file to write"),
    method: str = typer.Option("all", "--method", help=f"One of: {', '.join(METHODS)}"),
    p: float = typer.Option(0.3, "--p", help="Probability of each replacement or shuffle, in [0, 1]"),
    copies: int = typer.Option(1, "--copies", help="Augmented copies per sentence (>= 1)"),
    seed: int = typer.Option(0, "--seed", help="Random seed: the same seed gives the same output"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Gold from doc.spans[KEY] instead of doc.ents"),
) -> None:
    """Dai & Adel (2020) data augmentation: each sentence, then augmented copies."""
    transform_file(
        input_path,
        output,
        lambda docs: augment_docs(docs, method, p=p, n_copies=copies, seed=seed, spans_key=spans_key),  # type: ignore[arg-type]
        spans_key=spans_key,
    )

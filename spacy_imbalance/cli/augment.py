from pathlib import Path
from typing import Optional, cast

import typer

from ..corpus.augmentation.augmentation import MAX_COPIES, METHODS, AugmentMethod, augment_docs
from ._app import app, fail
from .checks import bounded
from .transform import transform_file


@app.command("augment")
def augment_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy file or a CoNLL file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .spacy file to write"),
    method: str = typer.Option("all", "--method", help=f"One of: {', '.join(METHODS)}"),
    p: float = typer.Option(0.3, "--p", help="Probability of each replacement or shuffle, in [0, 1]"),
    copies: int = typer.Option(1, "--copies", help=f"Augmented copies per sentence, in [1, {MAX_COPIES}]"),
    seed: int = typer.Option(0, "--seed", help="Random seed: the same seed gives the same output"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Gold from doc.spans[KEY] instead of doc.ents"),
) -> None:
    """Dai & Adel (2020) data augmentation: each sentence, then augmented copies."""
    # before reading the corpus: a bad setting should not wait for a large
    # file, and the copies are held in memory (1e9 of them grow until killed)
    if method not in METHODS:
        fail(f"Unknown --method {method!r}; choose one of {', '.join(METHODS)}")
    bounded(p, "--p", low=0, high=1)
    # one of METHODS, checked above: the Literal the library takes
    chosen = cast(AugmentMethod, method)
    bounded(copies, "--copies", low=1, high=MAX_COPIES, integer=True)
    transform_file(
        input_path,
        output,
        lambda docs: augment_docs(docs, chosen, p=p, n_copies=copies, seed=seed, spans_key=spans_key),
        spans_key=spans_key,
    )

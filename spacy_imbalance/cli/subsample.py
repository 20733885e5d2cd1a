from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..corpus.subsampling.subsampling import check_subsample_settings, entity_token_share, subsample
from ._app import app, fail
from .transform import transform_file


@app.command("subsample")
def subsample_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy file or a CoNLL file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .spacy file to write"),
    n: int = typer.Option(..., "--n", help="Number of sentences to keep"),
    entity_token_ratio: Optional[float] = typer.Option(
        None, "--entity-token-ratio", help="Target share of entity tokens, a fraction (0.05 for 5 %); default: a uniform sample"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the selection"),
    tolerance: float = typer.Option(0.005, "--tolerance", help="Largest accepted |share - target|, a fraction (0.005 = 0.5 points)"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Count doc.spans[KEY] instead of doc.ents"),
) -> None:
    """Low-resource and imbalanced subsets: n sentences, uniform or with a target entity-token share."""
    try:
        check_subsample_settings(n, entity_token_ratio, tolerance)
    except ValueError as err:
        # named as in the Python API and the reader: n_sentences is --n
        fail(str(err))
    after = transform_file(
        input_path,
        output,
        lambda docs: subsample(
            docs, n, entity_token_ratio=entity_token_ratio, seed=seed, tolerance=tolerance, spans_key=spans_key
        ),
        spans_key=spans_key,
    )
    if entity_token_ratio is not None:
        reached = entity_token_share(after, spans_key)
        msg.info(f"{100 * reached:.2f} % entity tokens, target {100 * entity_token_ratio:.2f} % (+/- {100 * tolerance:.2f} points)")

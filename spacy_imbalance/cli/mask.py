from pathlib import Path
from typing import Dict, List, Optional

import typer
from spacy.tokens import Doc
from wasabi import msg

from ..corpus.masking.masking import (
    check_keys,
    check_probability,
    describe_masking,
    mask_entities,
    masking_counts,
    unmaskable_gold,
)
from ._app import app, fail
from .transform import transform_file


@app.command("mask")
def mask_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy file or a CoNLL file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .spacy file to write"),
    p: float = typer.Option(..., "--p", help="Probability to drop each gold entity, in [0, 1]"),
    seed: int = typer.Option(0, "--seed", help="Seed of the random draws"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Mask doc.spans[KEY] instead of doc.ents"),
    masked_key: str = typer.Option("masked", "--masked-key", help="Span group that records the dropped entities"),
) -> None:
    """Synthetic unlabeled entities: drop each gold entity with probability p (kept in doc.spans[--masked-key])."""
    # before reading the corpus: a bad setting should not wait for a large file
    try:
        check_probability(p, name="--p")
        check_keys(spans_key, masked_key)
    except ValueError as err:
        fail(str(err))
    counts: Dict[str, int] = {}

    def transform(docs: List[Doc]) -> List[Doc]:
        # an absent --spans-key is refused by transform_file; here doc.ents
        # without entities while the gold sits in a span group
        problem = unmaskable_gold(docs, spans_key, setting="--spans-key")
        if problem is not None:
            raise ValueError(f"{input_path}: {problem}")
        masked = mask_entities(docs, p, seed=seed, spans_key=spans_key, masked_key=masked_key)
        counts["entities"], counts["dropped"] = masking_counts(docs, masked, spans_key=spans_key)
        return masked

    after = transform_file(input_path, output, transform, spans_key=spans_key)
    msg.info(f"Masked: {describe_masking(p, counts['entities'], counts['dropped'], len(after))}")

from pathlib import Path
from typing import List, Optional

import typer
from spacy.tokens import Doc
from wasabi import msg

from ..corpus.resampling.resampling import METHODS, CountUnit, sentence_weights
from ._app import app, fail
from .transform import transform_file


@app.command("resample")
def resample_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy or CoNLL training file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .spacy file to write"),
    method: str = typer.Option("sCR", "--method", "-m", help=f"One of {', '.join(METHODS)}"),
    count: str = typer.Option("tokens", "--count", help="What c(t, s) counts: tokens (the paper) or mentions"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Gold from doc.spans[KEY] instead of doc.ents"),
) -> None:
    """Sentence-level resampling (sC, sCR, sCRD, nsCRD): write every sentence f_s times."""
    if method not in METHODS:
        fail(f"Unknown --method {method!r}; choose one of {', '.join(METHODS)}")
    if count not in ("tokens", "mentions"):
        fail(f"--count must be 'tokens' or 'mentions', got {count!r}")
    unit: CountUnit = "tokens" if count == "tokens" else "mentions"

    def resample(docs: List[Doc]) -> List[Doc]:
        weights = sentence_weights(docs, method, count=unit, spans_key=spans_key)
        msg.info(f"{method}: {len(docs):,} sentences in, {sum(weights):,} out, f_s from 1 to {max(weights, default=1)}")
        return [doc for doc, weight in zip(docs, weights) for _ in range(weight)]

    transform_file(input_path, output, resample, spans_key=spans_key)

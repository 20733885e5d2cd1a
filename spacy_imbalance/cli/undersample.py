from pathlib import Path
from typing import List, Optional

import typer
from spacy.tokens import Doc
from wasabi import msg

from ..corpus.undersampling.undersampling import MAX_RATIO, check_entities, check_ratio, undersample_docs
from ._app import app, fail
from .transform import transform_file


@app.command("undersample")
def undersample_cli(
    input_path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy or CoNLL training file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .spacy file to write"),
    ratio: float = typer.Option(3.0, "--ratio", "-r", help=f"Kept tokens per entity token, in [1, {MAX_RATIO:g}] (R = 3 in Akkasi et al. 2018)"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Gold from doc.spans[KEY] instead of doc.ents"),
) -> None:
    """Balanced undersampling: keep entity tokens and a window of ratio x their count; drop entity-free sentences."""
    # before reading the corpus: a bad setting should not wait for a large file
    try:
        check_ratio(ratio, name="--ratio")
    except ValueError as err:
        fail(str(err))

    def undersample(docs: List[Doc]) -> List[Doc]:
        out, lost = undersample_docs(docs, ratio, spans_key=spans_key)
        # "Wrote 0 sentences" would pass for a result
        check_entities(len(out), len(docs), str(input_path), spans_key)
        msg.info(f"{len(docs) - len(out):,} of {len(docs):,} sentences had no entity and were dropped")
        if lost:
            msg.warn(f"{lost:,} spans of span groups other than the gold lost tokens and were left out")
        return out

    transform_file(input_path, output, undersample, spans_key=spans_key)

from pathlib import Path
from typing import Dict, List, Optional

import typer
from wasabi import msg

from ..corpus.conll import ConllFormatError
from ..corpus.docs_io import load_docs, write_docbin
from ..corpus.gold_checks import check_no_empty_spans
from ..review.apply import COUNT_COLUMNS, REJECTED_KEY, LabelCounts, Overlaps, ReviewConflict, apply_decisions, check_labels
from ..review.decisions import DecisionFile, DecisionFormat, DecisionFormatError, read_decisions
from ._app import _same_file, app, fail
from .checks import check_docbin_output, check_output_file, check_spans_key


@app.command("apply-review")
def apply_review_cli(
    corpus: Path = typer.Argument(..., metavar="CORPUS", help="The reviewed corpus: a .spacy file or a CoNLL file"),
    decision_paths: List[Path] = typer.Argument(
        ..., metavar="DECISIONS",
        help=(
            "Reviewed decisions: our review page's or Prodigy's (db-out), doccano's or Label Studio's records, as JSON lines or one "
            "JSON document (a list, or one object); the format is told by the records' keys. UTF-8, or UTF-16 with a byte order mark. "
            "Each label must be one of the corpus's"
        ),
    ),
    output: Path = typer.Option(..., "--output", "-o", help="The .spacy file to write"),
    fmt: Optional[DecisionFormat] = typer.Option(None, "--format", help="Read every DECISIONS file in this format instead of detecting it per file"),
    overlaps: Overlaps = typer.Option(
        Overlaps.REFUSE, "--overlaps",
        help="An accepted span overlapping an entity, or a rejected span that is one: refuse, replace (the review wins) or keep (the entity stays, the decision is skipped)",
    ),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="The gold is also in doc.spans[KEY]: check against it and add the accepted spans to it"),
    rejected_key: str = typer.Option(REJECTED_KEY, "--rejected-key", help="Span group of the rejected spans (spaCy's incorrect_spans_key)"),
) -> None:
    """Apply reviewed span decisions to a corpus: accepted spans become
    entities, rejected ones go to doc.spans[--rejected-key]."""
    _check_settings(corpus, decision_paths, output, spans_key, rejected_key)
    # the decisions first: a bad file should not wait for a large corpus
    files = _read_files(decision_paths, fmt)
    try:
        docs = load_docs(corpus)
        check_no_empty_spans(docs, str(corpus))
    except (OSError, ConllFormatError, ValueError) as err:
        fail(str(err))
    if spans_key is not None:
        check_spans_key(docs, spans_key, str(corpus))
    decisions = [d for f in files for d in f.decisions]
    try:
        # a label the corpus lacks ("PERSON" beside "person") would become a new entity type
        check_labels(docs, decisions, corpus=str(corpus), spans_key=spans_key)
        result = apply_decisions(
            docs, decisions, corpus=str(corpus), overlaps=overlaps, spans_key=spans_key, rejected_key=rejected_key,
        )
    except ReviewConflict as err:
        fail(str(err))
    n_written = write_docbin(result.docs, output)
    msg.good(f"Wrote {n_written:,} documents to {output}")
    print_groups(result.mirrors, result.left_alone, corpus=str(corpus), spans_key=spans_key)
    print_counts(result.counts)


def _check_settings(corpus: Path, decision_paths: List[Path], output: Path, spans_key: Optional[str], rejected_key: str) -> None:
    """Everything that can be refused before a file is read."""
    if not rejected_key.strip():
        fail(f"--rejected-key must name a span group, got {rejected_key!r}")
    if spans_key is not None and not spans_key.strip():
        fail(f"--spans-key must name a span group, got {spans_key!r}")
    if spans_key == rejected_key:
        fail(f"--spans-key and --rejected-key are both {spans_key!r}: the rejected spans would land among the gold; give two keys")
    check_output_file(output, "--output", inputs=[corpus, *decision_paths])
    check_docbin_output(output, "--output")
    for n, path in enumerate(decision_paths):
        for earlier in decision_paths[:n]:
            if _same_file(earlier, path):
                fail(f"{earlier} and {path} are the same DECISIONS file: give each once")
        if _same_file(corpus, path):
            fail(f"{path} is CORPUS: give the corpus first, then the decisions files")
        if not path.is_file():
            fail(f"No such decisions file: {path}" if not path.exists() else f"{path} is not a file: give a decisions file")


def _read_files(paths: List[Path], fmt: Optional[DecisionFormat]) -> List[DecisionFile]:
    files = []
    for path in paths:
        try:
            files.append(read_decisions(path, fmt))
        except (OSError, DecisionFormatError) as err:
            fail(str(err))
        f = files[-1]
        unit = "task" if f.format is DecisionFormat.LABEL_STUDIO else "line"
        msg.info(f"{path}: {f.format.value}, {_plural(f.records, unit)}, {_plural(len(f.decisions), 'span decision')}")
    return files


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def print_groups(mirrors: List[str], left_alone: Dict[str, str], *, corpus: str, spans_key: Optional[str]) -> None:
    """Which span groups follow the entities, and which were left as they
    were: a spancat trained on a group left alone trains on the old gold."""
    for key in mirrors:
        msg.info(f"Kept doc.spans[{key!r}] equal to doc.ents: it held exactly the entities in every document of {corpus}")
    for key, reason in left_alone.items():
        hint = f"; if it is gold that the review should change, give --spans-key {key}" if spans_key is None else ""
        msg.warn(f"Left doc.spans[{key!r}] as it was: it is no copy of doc.ents ({reason}){hint}")


def print_counts(counts: Dict[str, LabelCounts]) -> None:
    """One row per label and a total: what the decisions did."""
    if not counts:
        msg.warn("The decisions hold no span: the corpus is written unchanged")
        return
    total = LabelCounts()
    rows = []
    for label, row in counts.items():
        values = [getattr(row, column) for column in COUNT_COLUMNS]
        for column, value in zip(COUNT_COLUMNS, values):
            setattr(total, column, getattr(total, column) + value)
        rows.append((label, *values))
    rows.append(("(all labels)", *(getattr(total, column) for column in COUNT_COLUMNS)))
    msg.table(rows, header=("label", *COUNT_COLUMNS), aligns=("l", *("r" for _ in COUNT_COLUMNS)))

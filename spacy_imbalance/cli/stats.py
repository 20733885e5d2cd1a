from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

import srsly
import typer
from spacy.tokens import Doc
from wasabi import msg

from ..corpus.conll import ConllFormatError, label_has_space
from ..corpus.docs_io import load_docs
from ..corpus.scopes.stats import ScopeStats, describe_scope, scope_stats, scope_warnings
from ..corpus.stats import corpus_stats, gold_spans, zero_length_spans
from ._app import app, fail


def print_stats(docs: Iterable[Doc], spans_key: Optional[str] = None) -> None:
    s = corpus_stats(docs, spans_key=spans_key)
    least = most = "-"
    if s.least_frequent_type is not None:
        least = f"{s.least_frequent_type_pct:.2f} ({s.least_frequent_type})"
        most = f"{s.most_frequent_type_pct:.2f} ({s.most_frequent_type})"
    rows = [
        ("tokens", f"{s.tokens:,}"),
        ("sentences", f"{s.sentences:,}"),
        ("entity types", s.entity_types),
        ("% entity tokens", f"{s.entity_token_pct:.2f}"),
        ("% tokens of least frequent type", least),
        ("% tokens of most frequent type", most),
        ("% sentences with an entity", f"{s.sentences_with_entity_pct:.2f}"),
    ]
    msg.table(rows, aligns=("l", "r"))
    per_type = [(label, t.tokens, t.mentions, f"{t.token_pct:.2f}", f"{t.rareness:.2f}") for label, t in s.per_type.items()]
    if per_type:
        msg.table(per_type, header=("type", "tokens", "mentions", "% tokens", "rareness r_t"), aligns=("l", "r", "r", "r", "r"))


def print_scope_stats(stats: ScopeStats) -> None:
    """The "label scopes" section: each scope and its documents, and each
    type counted in the documents that annotate it."""
    msg.divider("label scopes")
    msg.table([(describe_scope(labels), f"{n:,}") for labels, n in stats.scopes], header=("scope", "documents"), aligns=("l", "r"))
    msg.text(
        "Per type, counted only in the documents that annotate it (the type is in their label scope, or they "
        "have no scope: all types):"
    )
    rows = [
        (label, f"{t.docs:,}", f"{t.entity_tokens:,}", f"{t.mentions:,}", f"{t.token_pct:.2f}")
        for label, t in stats.per_type.items()
    ]
    msg.table(rows, header=("type", "documents", "tokens", "mentions", "% tokens"), aligns=("l", "r", "r", "r", "r"))


def span_warnings(docs: Sequence[Doc], spans_key: Optional[str], path: Path) -> List[str]:
    """What the statistics leave out or a user should fix, naming documents
    (1-based, in file order): zero-length spans, which are not counted, and
    labels with a space, which the NER components refuse when training starts
    (a CoNLL file with one is refused when read)."""
    warnings = []
    empty = zero_length_spans(docs, spans_key)
    if empty:
        where = ", ".join(f"document {i + 1} ({span.label_!r} at token {span.start})" for i, span in empty[:10])
        more = " ..." if len(empty) > 10 else ""
        warnings.append(f"{path}: {len(empty)} zero-length span(s) not counted as mentions: {where}{more}")
    spaced: Dict[str, int] = {}
    for i, doc in enumerate(docs):
        for span in gold_spans(doc, spans_key):
            if label_has_space(span.label_):
                spaced.setdefault(span.label_, i)
    for label, i in spaced.items():
        warnings.append(
            f"{path}: the label {label!r} (first in document {i + 1}) has a space in it, which the NER "
            "components refuse when training starts: join its words with '_'"
        )
    return warnings


@app.command("stats")
def stats_cli(
    path: Path = typer.Argument(..., metavar="INPUT", help="A .spacy file or a CoNLL file"),
    spans_key: Optional[str] = typer.Option(None, "--spans-key", help="Count doc.spans[KEY] instead of doc.ents"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables"),
) -> None:
    """Imbalance statistics: entity token share, type frequencies, rareness;
    for a corpus whose documents carry label scopes, also each scope and
    every type counted in the documents that annotate it."""
    try:
        docs = load_docs(path)
    except (OSError, ConllFormatError, ValueError) as err:
        fail(str(err))
    try:
        scopes = scope_stats(docs, spans_key=spans_key)
    except ValueError as err:  # a damaged stored scope, named by its document
        fail(f"{path}: {err}")
    for warning in span_warnings(docs, spans_key, path):
        # beside --json's output, not in it
        if as_json:
            typer.echo(f"⚠ {warning}", err=True)
        else:
            msg.warn(warning)
    if as_json:
        for warning in scope_warnings(scopes) if scopes is not None else []:
            typer.echo(f"⚠ {path}: {warning}", err=True)
        data = corpus_stats(docs, spans_key=spans_key).to_dict()
        if scopes is not None:
            # only for a scoped corpus: the output of any other is as it was
            data["label_scopes"] = scopes.to_dict()
        print(srsly.json_dumps(data, indent=2))
    else:
        print_stats(docs, spans_key)
        if scopes is not None:
            print_scope_stats(scopes)
            for warning in scope_warnings(scopes):
                msg.warn(f"{path}: {warning}")

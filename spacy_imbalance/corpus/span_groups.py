"""Entities taken out of a doc's span groups: a corpus keeps copies of its
entities in span groups (``sc``, what spaCy's spancat and
spancat_singlelabel train on), so whatever removes an entity from the gold
(masking, a label scope's split) removes it from every group too."""
from typing import Collection, Optional, Set, Tuple

from spacy.tokens import Doc, Span, SpanGroup

# a span as (start, end, label): two spans with the same key are the same entity
SpanKey = Tuple[int, int, str]


def span_key(span: Span) -> SpanKey:
    return (span.start, span.end, span.label_)


def drop_from_span_groups(doc: Doc, gone: Set[SpanKey], skip: Collection[Optional[str]] = ()) -> None:
    """Every span identical to one of ``gone`` out of each span group but
    those in ``skip``; a group keeps its attrs, and one without such a span
    is left as it is."""
    for key in list(doc.spans):
        if key in skip:
            continue
        group = doc.spans[key]
        remaining = [span for span in group if span_key(span) not in gone]
        if len(remaining) != len(group):
            doc.spans[key] = SpanGroup(doc, name=key, attrs=group.attrs, spans=remaining)

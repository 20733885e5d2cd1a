"""Checks of the gold that the corpus tools read (issue 31): the span group a
setting names holds spans, and no span group holds a zero-length span.

Library code raises a ValueError with these messages; the commands turn it
into a clear message and exit code 1."""
from typing import List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

from .stats import gold_spans


def span_keys_with_spans(docs: Sequence[Doc]) -> List[str]:
    """The keys of the span groups that hold a span in some document, sorted."""
    return sorted({key for doc in docs for key, group in doc.spans.items() if len(group)})


def has_gold(docs: Sequence[Doc], spans_key: Optional[str]) -> bool:
    """Whether some document has a gold span: in doc.ents (``spans_key`` None)
    or in doc.spans[spans_key]."""
    return any(gold_spans(doc, spans_key) for doc in docs)


def missing_gold(docs: Sequence[Doc], spans_key: Optional[str], setting: str = "spans_key") -> Optional[str]:
    """Why ``docs`` have no gold under ``spans_key`` (``setting`` names it in
    the message), with the span keys they do have; None when some have gold."""
    if has_gold(docs, spans_key):
        return None
    keys = span_keys_with_spans(docs)
    have = f"the span keys with spans are {', '.join(repr(k) for k in keys)}" if keys else "no document has spans under any key"
    if spans_key is None:
        return f"no document has entities in doc.ents ({setting} null reads the gold from doc.ents); {have}"
    return f"no document has spans under {setting} {spans_key!r}; {have}"


def unreachable_gold(docs: Sequence[Doc], spans_key: Optional[str], setting: str = "spans_key") -> Optional[str]:
    """Why the gold that ``docs`` have is not where ``spans_key`` reads it,
    or None: a key that no document has, or doc.ents empty (``spans_key``
    None) while a span group holds spans. A corpus without any entity or span
    reads as it is (no gold to miss), so it gives None too."""
    problem = missing_gold(docs, spans_key, setting)
    if problem is None or (spans_key is None and not span_keys_with_spans(docs)):
        return None
    return problem


def first_empty_span(docs: Sequence[Doc]) -> Optional[Tuple[int, str, Span]]:
    """(document index, span key, span) of the first zero-length span of any
    span group, or None. doc.ents cannot hold one."""
    for i, doc in enumerate(docs):
        for key, group in doc.spans.items():
            for span in group:
                if span.end <= span.start:
                    return i, key, span
    return None


def check_no_empty_spans(docs: Sequence[Doc], source: str, unit: str = "document") -> None:
    """Raise a ValueError naming ``source`` (a file, a reader) and the
    document (``unit``: what ``docs`` are, e.g. "sentence" for a reader's
    sentences) when a span group holds a zero-length span: spaCy cannot copy
    it (E1052, naming neither), and it is no mention of anything."""
    found = first_empty_span(docs)
    if found is None:
        return
    i, key, span = found
    raise ValueError(
        f"{source}: {unit} {i} has a zero-length span in doc.spans[{key!r}] (label {span.label_!r}, "
        f"at token {span.start}), which marks no token and which spaCy cannot copy: remove it, "
        "or give it at least one token"
    )


__all__ = ["span_keys_with_spans", "has_gold", "missing_gold", "unreachable_gold", "first_empty_span", "check_no_empty_spans"]

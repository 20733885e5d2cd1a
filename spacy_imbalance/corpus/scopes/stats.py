"""The label scopes of a corpus, for ``spacy-imbalance stats``: which scopes
its documents carry, each type counted in the documents that annotate it,
and the types some documents do not annotate.

The corpus statistics (``corpus.stats``) count every type over every token;
in a corpus whose documents annotate different types that dilutes a type's
share by the documents that never annotate it. Here a type is counted only
in the documents whose scope includes it (a document without a scope
annotates every type).
"""
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from ..stats import gold_spans, type_coverage
from .scopes import get_label_scope

# what the statistics call the scope of a document without one
ALL_TYPES = "all types"


@dataclass
class ScopedTypeStats:
    """One type, in the documents that annotate it."""

    docs: int  # documents that annotate it (their scope includes it, or they have none)
    tokens: int  # all tokens of those documents
    entity_tokens: int  # tokens of its entities in them
    mentions: int
    token_pct: float  # entity_tokens / tokens, in percent
    docs_not_annotating: int  # documents whose scope leaves it out


@dataclass
class ScopeStats:
    documents: int
    # (the scope's labels, sorted, or None: no scope, every type; how many documents carry it), most documents first
    scopes: List[Tuple[Optional[List[str]], int]]
    per_type: Dict[str, ScopedTypeStats] = field(default_factory=dict)
    # (document index from 0, label) of each annotated entity outside its document's scope: not counted
    outside: List[Tuple[int, str]] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "documents": self.documents,
            "scopes": [{"labels": labels, "docs": docs} for labels, docs in self.scopes],
            "per_type": {label: asdict(t) for label, t in self.per_type.items()},
            "entities_outside_scope": len(self.outside),
        }


def doc_scopes(docs: Sequence[Doc]) -> List[Optional[FrozenSet[str]]]:
    """Each document's scope (None: none); a ValueError naming the document
    (from 1, in file order, as the statistics' other messages) whose stored
    scope is damaged."""
    scopes = []
    for i, doc in enumerate(docs):
        try:
            scopes.append(get_label_scope(doc))
        except ValueError as err:
            raise ValueError(f"document {i + 1}: {err}") from None
    return scopes


def scope_stats(docs: Sequence[Doc], *, spans_key: Optional[str] = None) -> Optional[ScopeStats]:
    """The scopes of ``docs`` and each type counted where it is annotated, or
    None when no document has a scope (every type annotated everywhere: the
    corpus statistics say it all).

    docs (Sequence[Doc]): gold docs.
    spans_key (Optional[str]): count ``doc.spans[spans_key]`` instead of ``doc.ents``.
    """
    scopes = doc_scopes(docs)
    if all(scope is None for scope in scopes):
        return None
    carried = Counter(None if scope is None else tuple(sorted(scope)) for scope in scopes)
    labels = {label for scope in scopes if scope is not None for label in scope}
    counts: Dict[str, Counter] = {}
    outside: List[Tuple[int, str]] = []
    for i, (doc, scope) in enumerate(zip(docs, scopes)):
        for label, (tokens, mentions) in type_coverage(gold_spans(doc, spans_key)).items():
            if scope is not None and label not in scope:
                outside.extend((i, label) for _ in mentions)
                continue
            labels.add(label)
            counts.setdefault(label, Counter()).update(entity_tokens=len(tokens), mentions=len(mentions))
    per_type = {label: _type_stats(docs, scopes, label, counts.get(label, Counter())) for label in labels}
    order = sorted(per_type, key=lambda label: (-per_type[label].entity_tokens, label))
    return ScopeStats(
        documents=len(docs),
        scopes=[(None if key is None else list(key), n) for key, n in sorted(carried.items(), key=_scope_order)],
        per_type={label: per_type[label] for label in order},
        outside=outside,
    )


def _scope_order(item: Tuple[Optional[Tuple[str, ...]], int]) -> Tuple[int, int, Tuple[str, ...]]:
    # most documents first; then "all types", then the scopes by their labels
    key, n = item
    return (-n, key is not None, key or ())


def _type_stats(docs: Sequence[Doc], scopes: Sequence[Optional[FrozenSet[str]]], label: str, counts: Counter) -> ScopedTypeStats:
    annotating = [doc for doc, scope in zip(docs, scopes) if scope is None or label in scope]
    tokens = sum(len(doc) for doc in annotating)
    return ScopedTypeStats(
        docs=len(annotating),
        tokens=tokens,
        entity_tokens=counts["entity_tokens"],
        mentions=counts["mentions"],
        token_pct=100.0 * counts["entity_tokens"] / tokens if tokens else 0.0,
        docs_not_annotating=len(docs) - len(annotating),
    )


def describe_scope(labels: Optional[List[str]]) -> str:
    """A scope as the statistics print it: its labels, or "all types"."""
    return ALL_TYPES if labels is None else ", ".join(labels)


def scope_warnings(stats: ScopeStats) -> List[str]:
    """What a user should know before training on the corpus: each type
    that some documents do not annotate, and the annotated entities outside
    their document's scope (which contradict it, and are not counted)."""
    warnings = []
    left_out = [(label, t.docs_not_annotating) for label, t in stats.per_type.items() if t.docs_not_annotating]
    if left_out:
        types = ", ".join(f"{label} ({n} of {stats.documents} documents)" for label, n in left_out)
        warnings.append(
            f"types outside the label scope of some documents: {types}. Those documents do not annotate them, and a "
            "component that ignores label scopes (a naive merge, e.g. spaCy's ner or spancat) learns every such "
            'entity in them as "no entity"'
        )
    if stats.outside:
        where = ", ".join(f"document {i + 1} ({label!r})" for i, label in stats.outside[:10])
        more = " ..." if len(stats.outside) > 10 else ""
        warnings.append(
            f"{len(stats.outside)} annotated entities have a type outside their document's label scope, which they "
            f"contradict (not counted above): {where}{more}; add the type to the scope or remove the entity"
        )
    return warnings

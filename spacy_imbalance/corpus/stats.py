"""Imbalance statistics of an NER corpus (the columns of Table 1 in
Wang & Wang, "Sentence-level resampling for NER", plus per-type rareness)."""
import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from spacy.tokens import Doc, Span


@dataclass
class TypeStats:
    tokens: int
    mentions: int
    token_pct: float  # share of *all* tokens (O included), in percent
    rareness: float  # r_t = -log2(tokens of t / all tokens)


@dataclass
class CorpusStats:
    tokens: int
    sentences: int
    entity_types: int
    entity_token_pct: float
    least_frequent_type: Optional[str]
    least_frequent_type_pct: Optional[float]
    most_frequent_type: Optional[str]
    most_frequent_type_pct: Optional[float]
    sentences_with_entity_pct: float
    per_type: Dict[str, TypeStats] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def gold_spans(doc: Doc, spans_key: Optional[str] = None) -> List[Span]:
    """The gold entities of a doc: ``doc.ents``, or ``doc.spans[spans_key]``."""
    if spans_key is None:
        return list(doc.ents)
    return list(doc.spans[spans_key]) if spans_key in doc.spans else []


def type_coverage(spans: Iterable[Span]) -> Dict[str, Tuple[Set[int], Set[Tuple[int, int]]]]:
    """Per type, the tokens its spans cover, each once (overlapping spans of
    one type, as span groups allow, must not count a token twice), and its
    mentions, each (start, end) once. A zero-length span covers no token and
    is no mention: it is left out."""
    coverage: Dict[str, Tuple[Set[int], Set[Tuple[int, int]]]] = {}
    for span in spans:
        if span.end <= span.start:
            continue
        tokens, mentions = coverage.setdefault(span.label_, (set(), set()))
        tokens.update(range(span.start, span.end))
        mentions.add((span.start, span.end))
    return coverage


def zero_length_spans(docs: Iterable[Doc], spans_key: Optional[str] = None) -> List[Tuple[int, Span]]:
    """The zero-length gold spans (which the statistics leave out), each with
    the 0-based index of its document, for a message naming them."""
    return [(i, span) for i, doc in enumerate(docs) for span in gold_spans(doc, spans_key) if span.end <= span.start]


def sentence_bounds(doc: Doc) -> List[Tuple[int, int]]:
    """Token offsets of the sentences of a doc; the whole doc if none are set."""
    if len(doc) and doc.has_annotation("SENT_START"):
        return [(sent.start, sent.end) for sent in doc.sents]
    return [(0, len(doc))]


def rareness(type_tokens: Dict[str, int], n_tokens: int) -> Dict[str, float]:
    """r_t = -log2(c_t / N); types without tokens are left out, never infinite."""
    return {
        label: -math.log2(count / n_tokens)
        for label, count in type_tokens.items()
        if count > 0 and n_tokens > 0
    }


def corpus_stats(docs: Iterable[Doc], *, spans_key: Optional[str] = None) -> CorpusStats:
    """Count tokens, sentences and entities of a gold corpus.

    docs (Iterable[Doc]): gold docs.
    spans_key (Optional[str]): read entities from ``doc.spans[spans_key]``
        instead of ``doc.ents``.
    RETURNS (CorpusStats): the statistics; percentages are in 0-100.
    """
    n_tokens = n_sentences = n_sentences_with = n_entity_tokens = 0
    type_tokens: Counter = Counter()
    type_mentions: Counter = Counter()
    for doc in docs:
        covered = [False] * len(doc)
        for label, (tokens, mentions) in type_coverage(gold_spans(doc, spans_key)).items():
            type_tokens[label] += len(tokens)
            type_mentions[label] += len(mentions)
            for i in tokens:
                covered[i] = True
        n_tokens += len(doc)
        n_entity_tokens += sum(covered)
        for start, end in sentence_bounds(doc):
            n_sentences += 1
            n_sentences_with += any(covered[start:end])
    r = rareness(type_tokens, n_tokens)

    def pct(count: int, total: int) -> float:
        return 100.0 * count / total if total else 0.0

    per_type = {
        label: TypeStats(
            tokens=type_tokens[label],
            mentions=type_mentions[label],
            token_pct=pct(type_tokens[label], n_tokens),
            rareness=r[label],
        )
        for label in sorted(type_tokens, key=lambda lab: (-type_tokens[lab], lab))
        if type_tokens[label] > 0
    }
    labels = list(per_type)
    return CorpusStats(
        tokens=n_tokens,
        sentences=n_sentences,
        entity_types=len(per_type),
        entity_token_pct=pct(n_entity_tokens, n_tokens),
        least_frequent_type=labels[-1] if labels else None,
        least_frequent_type_pct=per_type[labels[-1]].token_pct if labels else None,
        most_frequent_type=labels[0] if labels else None,
        most_frequent_type_pct=per_type[labels[0]].token_pct if labels else None,
        sentences_with_entity_pct=pct(n_sentences_with, n_sentences),
        per_type=per_type,
    )

"""Sentence-level resampling frequencies (Wang & Wang, "Sentence-level
resampling for named entity recognition", Eq. 1-4).

Each training sentence s is repeated f_s >= 1 times, where c(t, s) counts the
tokens (or mentions) of entity type t in s, l_s is the sentence length and
r_t = -log2(sum_s c(t, s) / N) the rareness of t over the N tokens of the
training set:

- ``sC``:    f_s = 1 + sum_t c(t, s)
- ``sCR``:   f_s = 1 + ceil(sqrt(sum_t r_t c(t, s)))
- ``sCRD``:  f_s = 1 + ceil(sum_t r_t c(t, s) / sqrt(l_s))
- ``nsCRD``: f_s = 1 + ceil(sum_t r_t sqrt(c(t, s)) / sqrt(l_s))
- ``none``:  f_s = 1
"""
import math
import warnings
from collections import Counter
from typing import Dict, Iterable, Iterator, List, Literal, Optional, Tuple

from spacy.tokens import Doc

from ..stats import gold_spans, sentence_bounds
from ..stats import rareness as _rareness_of_counts

Method = Literal["none", "sC", "sCR", "sCRD", "nsCRD"]
CountUnit = Literal["tokens", "mentions"]
METHODS: Tuple[str, ...] = ("none", "sC", "sCR", "sCRD", "nsCRD")
# ceil() of a sum of floats: 2.0000000000000004 must stay 2, not become 3
_CEIL_TOLERANCE = 1e-9


def sentence_type_counts(
    docs: Iterable[Doc], *, count: CountUnit = "tokens", spans_key: Optional[str] = None
) -> Iterator[Tuple[Counter, int]]:
    """Yield (c(., s), l_s) for every sentence of every doc.

    A doc without sentence boundaries is one sentence. An entity belongs to
    the sentence it starts in; with ``count="tokens"`` only its tokens inside
    that sentence are counted.
    """
    if count not in ("tokens", "mentions"):
        raise ValueError(f"count must be 'tokens' or 'mentions', got {count!r}")
    for doc in docs:
        spans = gold_spans(doc, spans_key)
        for start, end in sentence_bounds(doc):
            counts: Counter = Counter()
            for span in spans:
                if start <= span.start < end:
                    counts[span.label_] += min(span.end, end) - span.start if count == "tokens" else 1
            yield counts, end - start


def rareness(
    docs: Iterable[Doc], *, count: CountUnit = "tokens", spans_key: Optional[str] = None
) -> Dict[str, float]:
    """r_t = -log2(sum_s c(t, s) / N), N = all tokens (O included).

    Types without any count are absent, never infinite.
    """
    return _rareness_from(list(sentence_type_counts(docs, count=count, spans_key=spans_key)))


def _frequency(method: str, counts: Counter, length: int, r: Dict[str, float]) -> int:
    if method == "none" or not counts:
        return 1
    if method == "sC":
        return 1 + sum(counts.values())
    if method == "nsCRD":
        weighted = sum(r[t] * math.sqrt(c) for t, c in counts.items())
    else:
        weighted = sum(r[t] * c for t, c in counts.items())
    value = math.sqrt(weighted) if method == "sCR" else weighted / math.sqrt(length)
    return 1 + math.ceil(value - _CEIL_TOLERANCE)


def sentence_weights(
    docs: Iterable[Doc],
    method: str,
    *,
    count: CountUnit = "tokens",
    spans_key: Optional[str] = None,
    rareness: Optional[Dict[str, float]] = None,
) -> List[int]:
    """The resampling frequency f_s of every sentence, in corpus order.

    docs (Iterable[Doc]): the gold training docs.
    method (str): one of "none", "sC", "sCR", "sCRD", "nsCRD".
    count (str): "tokens" (the paper) or "mentions": what c(t, s) counts.
    spans_key (Optional[str]): gold from doc.spans[spans_key], not doc.ents.
    rareness (Optional[Dict[str, float]]): r_t; computed from ``docs`` when None.
    RETURNS (List[int]): one integer >= 1 per sentence.
    """
    if method not in METHODS:
        raise ValueError(f"Unknown resampling method {method!r}; choose one of {', '.join(METHODS)}")
    sentences = list(sentence_type_counts(docs, count=count, spans_key=spans_key))
    if method != "none" and not any(counts for counts, _ in sentences):
        source = f"doc.spans[{spans_key!r}]" if spans_key is not None else "doc.ents"
        warnings.warn(
            f"Resampling with {method!r}: none of the {len(sentences)} sentences has an entity in "
            f"{source}, so every sentence keeps weight 1 (the corpus is not resampled)",
            stacklevel=2,
        )
    if rareness is None and method in ("sCR", "sCRD", "nsCRD"):
        rareness = _rareness_from(sentences)
    r = rareness or {}
    missing = {t for counts, _ in sentences for t in counts} - set(r)
    if missing and method in ("sCR", "sCRD", "nsCRD"):
        raise ValueError(f"No rareness given for entity type(s) {sorted(missing)}")
    return [_frequency(method, counts, length, r) for counts, length in sentences]


def _rareness_from(sentences: List[Tuple[Counter, int]]) -> Dict[str, float]:
    totals: Counter = Counter()
    for counts, _ in sentences:
        totals.update(counts)
    return _rareness_of_counts(totals, sum(length for _, length in sentences))

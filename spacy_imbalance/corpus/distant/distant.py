"""Distantly supervised labels from a gold corpus, the way BOND (Liang et al.
2020) and the DS-NER datasets Top-Neg trains on were made: an entity
dictionary, then string matching over the training text.

The dictionary is simulated from the gold itself: a share
``dictionary_fraction`` of the gold entity *mentions* is drawn, and each
surface form drawn maps to its most frequent type among the drawn mentions.
Drawing mentions, not distinct strings, makes frequent entities likely to be
in the dictionary and rare ones likely missing, as with a real knowledge base.

Matching is greedy longest match, left to right, over lowercased token
sequences: case-insensitive (like BOND's dictionary matching, and so "may"
matches the dictionary's "May"), on whole tokens (no match inside a word).
Matched spans become entities and every other token O, not missing: under
distant supervision an entity the dictionary lacks looks exactly like a
non-entity. The labels are thus incomplete (entities absent from the
dictionary are missed) and noisy (a string matched where it is no entity, or
an ambiguous string given its majority type), which ``label_quality``
measures against the gold.
"""
import math
import random
from collections import Counter, defaultdict
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from spacy.tokens import Doc, Span, SpanGroup

from ..stats import gold_spans

Entry = Tuple[str, ...]  # a dictionary key: the lowercased tokens of a surface form
Dictionary = Dict[Entry, str]
SpanKey = Tuple[int, int, str]

DEFAULT_FRACTION = 0.5
# one-character entries ("a", "I", "-") match everywhere and are junk
DEFAULT_MIN_LENGTH = 2
# a floor above the longest names (about 100 characters) leaves the
# dictionary empty and every label O
MAX_MIN_LENGTH = 100


def check_distant_settings(dictionary_fraction: float, seed: int, min_length: int) -> None:
    """Raise a ValueError naming the setting unless 0 < dictionary_fraction <= 1,
    seed is an integer and min_length an integer in [1, MAX_MIN_LENGTH]."""
    # `not (...)` also rejects NaN, which fails every comparison
    if isinstance(dictionary_fraction, bool) or not isinstance(dictionary_fraction, (int, float)) or not (
        0.0 < dictionary_fraction <= 1.0
    ):
        raise ValueError(
            f"dictionary_fraction must be a fraction in (0, 1] of the gold mentions (0.5 for half), got {dictionary_fraction!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if isinstance(min_length, bool) or not isinstance(min_length, int) or not (1 <= min_length <= MAX_MIN_LENGTH):
        raise ValueError(
            f"min_length must be an integer in [1, {MAX_MIN_LENGTH}] (characters of a dictionary entry; "
            f"a longer floor leaves out every entity name), got {min_length!r}"
        )


def entry_of(span: Span) -> Entry:
    """The dictionary key of a span: its lowercased tokens."""
    # str.lower of the text, not Token.lower_: a bare Vocab has no LOWER getter
    return tuple(token.text.lower() for token in span)


def build_dictionary(
    docs: Iterable[Doc],
    dictionary_fraction: float = DEFAULT_FRACTION,
    *,
    seed: int = 0,
    min_length: int = DEFAULT_MIN_LENGTH,
    spans_key: Optional[str] = None,
) -> Dictionary:
    """An entity dictionary from a random share of the gold mentions.

    ⌈dictionary_fraction·n⌉ of the corpus' n gold mentions are drawn without
    replacement by ``random.Random(seed).sample`` over the mentions in corpus
    order, so the same corpus and seed give the same dictionary. Each drawn
    surface form (lowercased tokens) maps to its most frequent type among the
    drawn mentions; a tie goes to the label first in alphabetical order.
    Surface forms shorter than ``min_length`` characters (tokens joined by
    one space) are left out.

    docs (Iterable[Doc]): gold docs; they are not modified.
    dictionary_fraction (float): the share of mentions drawn, in (0, 1].
    seed (int): seed of the draw.
    min_length (int): shortest entry kept, in characters.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    RETURNS (Dict[Tuple[str, ...], str]): lowercased tokens -> label.
    """
    check_distant_settings(dictionary_fraction, seed, min_length)
    mentions = [(entry_of(span), span.label_) for doc in docs for span in gold_spans(doc, spans_key)]
    # ⌈f·n⌉ without floating-point overshoot (0.7·10 is 7.000000000000001)
    n_drawn = min(len(mentions), max(0, math.ceil(dictionary_fraction * len(mentions) - 1e-9)))
    drawn = random.Random(seed).sample(mentions, n_drawn)
    counts: Dict[Entry, Counter] = defaultdict(Counter)
    for entry, label in drawn:
        if entry and len(" ".join(entry)) >= min_length:
            counts[entry][label] += 1
    # most frequent, then alphabetical: independent of the draw's order
    return {entry: min(labels.items(), key=lambda item: (-item[1], item[0]))[0] for entry, labels in counts.items()}


def match_dictionary(doc: Doc, dictionary: Dictionary) -> List[Span]:
    """Greedy longest match, left to right: at each token the longest entry
    starting there wins and matching goes on after it; a token where no entry
    starts is skipped. The spans never overlap."""
    if not dictionary or not len(doc):
        return []
    longest = max(len(entry) for entry in dictionary)
    lower = [token.text.lower() for token in doc]
    spans: List[Span] = []
    i = 0
    while i < len(lower):
        for n in range(min(longest, len(lower) - i), 0, -1):
            label = dictionary.get(tuple(lower[i : i + n]))
            if label is not None:
                spans.append(Span(doc, i, i + n, label=label))
                i += n
                break
        else:
            i += 1
    return spans


def distant_annotate(docs: Iterable[Doc], dictionary: Dictionary, *, spans_key: Optional[str] = None) -> List[Doc]:
    """Re-annotate copies of the docs with the dictionary's matches.

    In each copy doc.ents are the matches and every other token is O (tokens
    whose annotation was missing included). Every span group is removed: they
    describe the gold the distant labels replace, which a model trained on
    distant supervision must not see. With ``spans_key`` the matches are also
    ``doc.spans[spans_key]``, the group the gold was read from.

    docs (Iterable[Doc]): docs to label; they are not modified.
    dictionary (Dict[Tuple[str, ...], str]): lowercased tokens -> label.
    spans_key (Optional[str]): also write the matches to doc.spans[spans_key].
    RETURNS (List[Doc]): relabelled copies of the docs, in the same order.
    """
    output = []
    for doc in docs:
        doc = doc.copy()
        spans = match_dictionary(doc, dictionary)
        doc.set_ents(spans, default="outside")
        for key in list(doc.spans):
            del doc.spans[key]
        if spans_key is not None:
            doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=spans)
        output.append(doc)
    return output


def distant_supervision(
    docs: Sequence[Doc], dictionary_fraction: float = DEFAULT_FRACTION, *, spans_key: Optional[str] = None, **draw: Any
) -> Tuple[List[Doc], Dictionary]:
    """``build_dictionary`` from the docs' gold (the same arguments; ``draw``
    its ``seed`` and ``min_length``), then ``distant_annotate`` the same docs
    with it: the distantly labelled copies and the dictionary."""
    dictionary = build_dictionary(docs, dictionary_fraction, spans_key=spans_key, **draw)
    return distant_annotate(docs, dictionary, spans_key=spans_key), dictionary


class LabelQuality(NamedTuple):
    """Entity-level agreement of distant labels with the gold (exact start,
    end and label)."""

    n_gold: int
    n_distant: int
    n_correct: int

    @property
    def precision(self) -> float:
        """Correct distant entities / distant entities (0 when there are none)."""
        return self.n_correct / self.n_distant if self.n_distant else 0.0

    @property
    def recall(self) -> float:
        """Correct distant entities / gold entities (0 when there are none)."""
        return self.n_correct / self.n_gold if self.n_gold else 0.0

    @property
    def f(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def label_quality(gold: Sequence[Doc], distant: Sequence[Doc], *, spans_key: Optional[str] = None) -> LabelQuality:
    """Entity-level precision and recall of the distant labels (doc.ents of
    ``distant``) against the gold of the same docs (as Table 4 of the Top-Neg
    paper reports them for its DS datasets).

    gold (Sequence[Doc]): the gold docs.
    distant (Sequence[Doc]): their distantly labelled copies, in the same order.
    spans_key (Optional[str]): gold from doc.spans[spans_key] instead of doc.ents.
    RETURNS (LabelQuality): counts, precision and recall.
    """
    if len(gold) != len(distant):
        raise ValueError(f"label_quality: {len(gold)} gold docs but {len(distant)} distant ones")
    n_gold = n_distant = n_correct = 0
    for i, (reference, labelled) in enumerate(zip(gold, distant)):
        if [t.text for t in reference] != [t.text for t in labelled]:
            raise ValueError(f"label_quality: doc {i} has other tokens in the gold and the distant docs")
        expected: Set[SpanKey] = {_key(span) for span in gold_spans(reference, spans_key)}
        found: Set[SpanKey] = {_key(span) for span in labelled.ents}
        n_gold += len(expected)
        n_distant += len(found)
        n_correct += len(expected & found)
    return LabelQuality(n_gold, n_distant, n_correct)


def describe_distant(dictionary_fraction: float, dictionary: Dictionary, quality: LabelQuality, n_sentences: int) -> str:
    """One line for the reader, e.g. ``dictionary of 1,234 entries from 50 % of
    the gold mentions; labels P=91.2 % R=60.3 % (2,345 of 3,890 gold entities)
    in 1,675 sentences``."""
    return (
        f"dictionary of {len(dictionary):,} entries from {100 * dictionary_fraction:g} % of the gold mentions; "
        f"labels P={100 * quality.precision:.1f} % R={100 * quality.recall:.1f} % "
        f"({quality.n_correct:,} of {quality.n_gold:,} gold entities found, {quality.n_distant:,} labelled) "
        f"in {n_sentences:,} sentences"
    )


def _key(span: Span) -> SpanKey:
    return (span.start, span.end, span.label_)


__all__ = [
    "DEFAULT_FRACTION",
    "DEFAULT_MIN_LENGTH",
    "MAX_MIN_LENGTH",
    "LabelQuality",
    "build_dictionary",
    "check_distant_settings",
    "describe_distant",
    "distant_annotate",
    "distant_supervision",
    "entry_of",
    "label_quality",
    "match_dictionary",
]

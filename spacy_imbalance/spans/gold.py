"""Gold classes of a batch's span candidates (``candidates.py``).

Class 0 is O (not an entity), class k+1 is the component's k-th label and
``UNKNOWN`` (-1) marks a candidate that touches a token without entity
annotation (``ent_iob`` unset, or a token the reference does not align to):
it is neither a positive nor a negative that may be sampled.

Spans a reviewer rejected (``doc.spans[incorrect_key]`` of the reference, as
``spacy-imbalance apply-review`` writes them and spaCy's ``ner`` reads them
through its ``incorrect_spans_key``) are known negatives: class O even where
the annotation around them is missing, flagged in ``SpanTargets.known`` so
that the component trains on every one of them, not on a sample.
"""
import logging
import warnings
from itertools import islice
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

import numpy
from spacy.attrs import ORTH, SPACY
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import Ops
from thinc.types import Array1d, Ints1d

from .candidates import Candidates, covering_width, doc_offsets, enumerate_candidates, touching

UNKNOWN = -1
O_CLASS = 0

GoldSpan = Tuple[int, int, str]  # start, end (exclusive), label: tokens of example.predicted


class SpanTargets(NamedTuple):
    classes: Ints1d  # per candidate: O_CLASS, label id + 1, or UNKNOWN
    masked: Optional[Array1d]  # per candidate, bool: a masked entity (None: no example records any)
    n_gold: int  # gold spans that are candidates
    n_too_wide: int  # gold spans wider than the candidates' max width
    # per candidate, bool: a known negative (a rejected span that is not gold); None: no example has any
    known: Optional[Array1d] = None
    # per candidate, host bool (n, K + 1): the classes outside its doc's label scope, which a
    # candidate not annotated as an entity may also be; None: no doc leaves a type out (spans/scopes.py)
    out_of_scope: Optional[numpy.ndarray] = None


def aligned_gold_spans(example: Example, gold_key: Optional[str]) -> Tuple[List[GoldSpan], numpy.ndarray]:
    """Gold spans in the tokens of ``example.predicted`` and a bool per token
    saying whether its annotation is missing.

    From doc.ents (``gold_key`` None): the aligned BILUO tags, so a token whose
    ``ent_iob`` is unset, or that the reference does not align to, is missing.
    From doc.spans[gold_key]: the aligned spans (a doc without the key has
    none, as for spaCy's spancat); span groups have no notion of missing.
    """
    if gold_key is None and same_tokens(example):
        # the common case (gold_preproc, or the tokenizer that made the
        # corpus): array reads instead of per-token BILUO alignment
        iob = example.reference.to_array("ENT_IOB")
        return [(e.start, e.end, e.label_) for e in example.reference.ents], iob == 0
    if gold_key is not None:
        group = example.reference.spans.get(gold_key, [])
        spans = example.get_aligned_spans_y2x(group, allow_overlap=True)
        return [(s.start, s.end, s.label_) for s in spans], numpy.zeros(len(example.predicted), dtype=bool)
    return spans_from_aligned_ner(example)


def spans_from_aligned_ner(example: Example) -> Tuple[List[GoldSpan], numpy.ndarray]:
    """Entity spans and missing tokens read off ``example.get_aligned_ner()``:
    right for any tokenization, but a Python pass over the tokens."""
    missing = numpy.zeros(len(example.predicted), dtype=bool)
    spans: List[GoldSpan] = []
    start, label = -1, ""
    for i, tag in enumerate(example.get_aligned_ner()):
        if tag is None or tag in ("-", ""):
            missing[i] = True
            start = -1
            continue
        if tag[0] == "U":
            spans.append((i, i + 1, tag[2:]))
        elif tag[0] == "B":
            start, label = i, tag[2:]
        elif tag[0] == "L" and start >= 0 and tag[2:] == label:
            spans.append((start, i + 1, label))
            start = -1
    return spans, missing


def same_tokens(example: Example) -> bool:
    """Whether predicted and reference have identical tokens (text and
    trailing space), so that token i of one is token i of the other."""
    x, y = example.predicted, example.reference
    if len(x) != len(y):
        return False
    return bool(numpy.array_equal(x.to_array([ORTH, SPACY]), y.to_array([ORTH, SPACY])))


def aligned_group_spans(example: Example, key: str) -> Optional[List[Tuple[int, int]]]:
    """Boundaries of the reference's ``doc.spans[key]`` in the tokens of
    ``example.predicted``, or None without that group."""
    if key not in example.reference.spans:
        return None
    group = example.reference.spans[key]
    return [(s.start, s.end) for s in example.get_aligned_spans_y2x(group, allow_overlap=True)]


class _FlaggedSpans:
    """The spans of one span group over a batch (masked entities, rejected
    spans), as candidate flags; None when no example has the group."""

    def __init__(self) -> None:
        self.starts: List[int] = []
        self.widths: List[int] = []
        self.seen = False

    def add(self, spans: Optional[List[Tuple[int, int]]], offset: int, max_width: int) -> None:
        if spans is None:
            return
        self.seen = True
        # a span wider than the candidates is none of them: nothing to flag
        for start, end in spans:
            if end - start <= max_width:
                self.starts.append(offset + start)
                self.widths.append(end - start)

    def flags(self, ops: Ops, candidates: Candidates) -> Optional[Array1d]:
        if not self.seen:
            return None
        xp = ops.xp
        flags = xp.zeros((len(candidates),), dtype=bool)
        if self.starts:
            flags[candidates.index(xp.asarray(self.starts, dtype="int32"), xp.asarray(self.widths, dtype="int32"))] = True
        return flags


def span_targets(
    ops: Ops,
    examples: Sequence[Example],
    candidates: Candidates,
    label_index: Dict[str, int],
    *,
    gold_key: Optional[str] = None,
    masked_key: Optional[str] = "masked",
    incorrect_key: Optional[str] = None,
    component: str = "sampled_spancat",
) -> SpanTargets:
    """Gold class of every candidate of the batch of ``examples``, with the
    masked entities (``masked_key``) and the known negatives (``incorrect_key``)
    flagged.

    The loop is over examples and gold spans, never over candidates: each
    gold span finds its candidate by ``Candidates.index``."""
    offsets = doc_offsets(candidates.doc_lengths)
    starts: List[int] = []
    widths: List[int] = []
    classes: List[int] = []
    missing_parts: List[numpy.ndarray] = []
    masked = _FlaggedSpans()
    known = _FlaggedSpans()
    n_too_wide = 0
    for eg, offset in zip(examples, offsets):
        spans, missing = aligned_gold_spans(eg, gold_key)
        missing_parts.append(missing)
        if gold_key is not None:  # doc.ents cannot share boundaries
            check_single_label(eg, spans, component)
        for start, end, label in spans:
            if label not in label_index:
                raise ValueError(
                    f"{component}: gold label {label!r} is not among the component's labels "
                    f"({', '.join(sorted(label_index))}); pass every label to initialize "
                    f"(e.g. [initialize.components.{component}.labels])"
                )
            if end - start > candidates.max_width:
                n_too_wide += 1
                continue
            starts.append(offset + start)
            widths.append(end - start)
            classes.append(label_index[label] + 1)
        if masked_key:
            # the entities masking removed (spacy_imbalance.corpus.masking)
            masked.add(aligned_group_spans(eg, masked_key), offset, candidates.max_width)
        if incorrect_key:
            known.add(aligned_group_spans(eg, incorrect_key), offset, candidates.max_width)
    xp = ops.xp
    result = xp.zeros((len(candidates),), dtype="int32")
    if missing_parts and any(m.any() for m in missing_parts):
        result[touching(ops, candidates, numpy.concatenate(missing_parts))] = UNKNOWN
    if starts:
        index = candidates.index(xp.asarray(starts, dtype="int32"), xp.asarray(widths, dtype="int32"))
        # a gold span is gold even where some other annotation is missing
        result[index] = xp.asarray(classes, dtype="int32")
    known_flags = known.flags(ops, candidates)
    if known_flags is not None:
        # gold wins over a rejection of the same span (a corpus that says both keeps its entity);
        # elsewhere the reviewer's word makes the span O, even where the annotation around it is missing
        known_flags &= result <= O_CLASS
        result[known_flags] = O_CLASS
    return SpanTargets(result, masked.flags(ops, candidates), len(starts), n_too_wide, known_flags)


def check_single_label(example: Example, spans: Sequence[GoldSpan], component: str) -> None:
    """A candidate has one class: two gold spans with the same boundaries and
    different labels (possible in a span group) cannot both be learned, and
    keeping either would be a silent guess."""
    seen: Dict[Tuple[int, int], str] = {}
    for start, end, label in spans:
        other = seen.setdefault((start, end), label)
        if other != label:
            raise ValueError(
                f"{component}: the gold span {example.predicted[start:end].text!r} (tokens {start}-{end}) of the doc "
                f"{example.predicted.text[:60]!r} has two labels, {other!r} and {label!r}; sampled_spancat gives "
                "each span a single label"
            )


def gold_widths(examples: Iterable[Example], gold_key: Optional[str], component: str = "sampled_spancat") -> List[int]:
    """The width in tokens of every gold span of ``examples``, which are
    checked to give each span one label."""
    widths: List[int] = []
    for eg in examples:
        spans, _ = aligned_gold_spans(eg, gold_key)
        if gold_key is not None:
            check_single_label(eg, spans, component)
        widths.extend(end - start for start, end, _ in spans)
    return widths


def count_gold(
    examples: Iterable[Example], max_width: int, gold_key: Optional[str], component: str = "sampled_spancat"
) -> Tuple[int, int]:
    """(gold spans, gold spans wider than ``max_width``) over ``examples``,
    which are checked to give each span one label."""
    widths = gold_widths(examples, gold_key, component)
    return len(widths), sum(1 for width in widths if width > max_width)


def warn_too_wide(examples: Iterable[Example], max_width: int, gold_key: Optional[str], component: str) -> None:
    """A warning when gold spans of ``examples`` are wider than the
    candidates (``count_gold``): no update or prediction ever sees them.
    component (str): The component's name."""
    n_gold, n_wide = count_gold(examples, max_width, gold_key, component)
    if n_wide:
        warnings.warn(
            f"sampled_spancat '{component}': {n_wide} of {n_gold} gold spans ({100 * n_wide / n_gold:.1f} %) "
            f"are wider than max_span_width = {max_width} tokens; they are no candidates, so "
            "they are never trained on nor predicted. Raise max_span_width to cover them.",
            stacklevel=3,
        )


def width_from_gold(examples: Iterable[Example], gold_key: Optional[str], component: str) -> int:
    """``max_span_width = null``: the width that covers ``WIDTH_COVERAGE``
    of the gold spans (``covering_width``), logged with what it covers.
    component (str): The component's name."""
    widths = gold_widths(examples, gold_key, component)
    width = covering_width(widths)
    covered = sum(1 for w in widths if w <= width)
    logging.getLogger("spacy").info(
        "sampled_spancat '%s': max_span_width = %d from the training data (covers %d of %d gold spans, %.1f %%)",
        component, width, covered, len(widths), 100 * covered / max(len(widths), 1),
    )
    return width


TargetsOf = Callable[[List[Example], Candidates], SpanTargets]


def count_classes(ops: Ops, examples: Iterable[Example], n_classes: int, max_width: int, targets: TargetsOf) -> List[int]:
    """Gold class counts over every candidate of ``examples`` (O = negative
    candidates; ``targets`` gives a batch's classes), 256 examples at a time:
    the frequencies weighted losses need."""
    counts = numpy.zeros(n_classes, dtype="int64")
    examples = iter(examples)
    while batch := list(islice(examples, 256)):
        candidates = enumerate_candidates(ops, [len(eg.predicted) for eg in batch], max_width)
        classes = ops.to_numpy(targets(batch, candidates).classes)
        counts += numpy.bincount(classes[classes >= 0], minlength=n_classes)
    return [int(c) for c in counts]


def gold_labels(examples: Iterable[Example], gold_key: Optional[str]) -> List[str]:
    """The labels of the reference gold (doc.ents or doc.spans[gold_key])."""
    return doc_labels((eg.reference for eg in examples), gold_key)


def doc_labels(docs: Iterable[Doc], gold_key: Optional[str]) -> List[str]:
    labels: Set[str] = set()
    for doc in docs:
        group: Iterable[Span] = doc.ents if gold_key is None else doc.spans.get(gold_key, [])
        labels.update(span.label_ for span in group)
    return sorted(labels)

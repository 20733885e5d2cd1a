"""Score every candidate span of a document with a ``sampled_spancat``
model, and decode the spans an audit looks at.

The audit's unit is a *decoded* span: candidates whose entity probability
(1 - p(O)) is at least a small floor, kept greedily by that probability
when they overlap no span kept before them (and, in the training corpus,
no annotated entity). The same decoding runs on the dev set, where the
outcome of each decoded span is known, so that a calibration fitted there
applies to the suspects.
"""
from dataclasses import dataclass
from functools import partial
from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from thinc.types import Floats2d

from ..decisions.softmax import softmax
from ..evaluation.components import span_component
from ..evaluation.scoring import score_spans
from ..pipeline.sampled_spancat import SampledSpanCategorizer
from ..spans.decoding import greedy_non_overlapping
from ..spans.scoring import Choice

# the lowest entity probability a decoded span may have: below it the spans
# are so many and so unlikely that calibration, not the model, would decide
# their sum
DEFAULT_FLOOR = 0.01


@dataclass
class DocSpans:
    """One document's candidates that pass the floor, as host arrays."""

    starts: numpy.ndarray  # int32 token start
    ends: numpy.ndarray  # int32 exclusive token end
    probs: numpy.ndarray  # float32 (n, 1 + n_labels); column 0 is O

    @property
    def entity_probs(self) -> numpy.ndarray:
        return 1.0 - self.probs[:, 0]


@dataclass
class Decoded:
    """One document's decoded spans."""

    starts: numpy.ndarray
    ends: numpy.ndarray
    # the model's probability that the span is an entity (1 - p(O))
    scores: numpy.ndarray
    # (n, n_labels): the label distribution given that it is an entity
    label_probs: numpy.ndarray

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def best_labels(self) -> numpy.ndarray:
        return self.label_probs.argmax(axis=1) if len(self) else numpy.zeros((0,), dtype="int64")


def check_component(nlp: Language, component: str, *, source: str) -> SampledSpanCategorizer:
    """The sampled_spancat ``component`` of ``nlp`` (read from ``source``):
    the audit calibrates its span probabilities."""
    try:
        return span_component(nlp, component)
    except ValueError as err:
        raise ValueError(f"{source} (--component {component}): {err}") from None


def span_probabilities(
    nlp: Language,
    component: str,
    docs: Iterable[Doc],
    *,
    floor: float = DEFAULT_FLOOR,
    batch_size: int = 128,
) -> Iterator[DocSpans]:
    """Class probabilities of every candidate of each doc whose entity
    probability is at least ``floor``, predicted on copies of the docs'
    tokens (their annotations are not seen) after the pipeline's upstream
    components (``evaluation.scoring.score_spans``)."""
    check_component(nlp, component, source="the pipeline")
    choose = partial(_entity_probabilities, floor=floor)
    for batch, spans in score_spans(nlp, component, docs, choose, batch_size=batch_size):
        for doc_spans in spans.by_doc([len(doc) for doc in batch]):
            yield DocSpans(doc_spans.starts, doc_spans.ends, doc_spans.columns["probs"])


def _entity_probabilities(xp: Any, logits: Floats2d, *, floor: float) -> Choice:
    """Every class probability of the candidates whose entity probability
    1 - p(O) is at least ``floor``."""
    probs = softmax(xp, logits)
    keep = xp.nonzero(1.0 - probs[:, 0] >= floor)[0]
    return Choice(keep, {"probs": probs[keep]})


def decode(spans: DocSpans, blocked: Optional[Sequence[Tuple[int, int]]] = None) -> Decoded:
    """Greedy non-overlapping spans by entity probability, leaving out every
    candidate that touches a ``blocked`` (start, exclusive end) span: in the
    training corpus, the annotated entities."""
    scores = spans.entity_probs
    keep = numpy.ones(len(scores), dtype=bool)
    for start, end in blocked or ():
        keep &= (spans.ends <= start) | (spans.starts >= end)
    idx = numpy.nonzero(keep)[0]
    chosen = idx[greedy_non_overlapping(spans.starts[idx], spans.ends[idx], scores[idx])] if len(idx) else idx
    label_probs = spans.probs[chosen, 1:]
    totals = label_probs.sum(axis=1, keepdims=True)
    label_probs = numpy.divide(label_probs, totals, out=numpy.zeros_like(label_probs), where=totals > 0)
    return Decoded(spans.starts[chosen], spans.ends[chosen], scores[chosen].astype("float64"), label_probs.astype("float64"))


def boundary_matches(decoded: Decoded, gold: Sequence[Tuple[int, int]]) -> numpy.ndarray:
    """1.0 for each decoded span whose boundaries are a gold entity's."""
    gold_set = set((int(s), int(e)) for s, e in gold)
    return numpy.asarray([float((int(s), int(e)) in gold_set) for s, e in zip(decoded.starts, decoded.ends)], dtype="float64")

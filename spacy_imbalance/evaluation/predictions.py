"""A ``sampled_spancat``'s decision inputs on dev docs, predicted once and
kept on the host.

A threshold search decodes the dev set hundreds of times and a reliability
table reads each decoded span's probabilities once; neither needs the
model again. Per batch the component's logits are reduced on the device to
what the decision reads (``spans.scoring.best_entity``: the most probable entity
label, its probability, whether it is the argmax, and p(O)), for the
candidates that pass a floor only, and copied to the host in one transfer.
"""
from dataclasses import dataclass
from functools import partial
from typing import Any, List, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from thinc.types import Floats2d

from ..decisions.softmax import probability_of
from ..spans.scoring import Choice, best_entity
from .components import span_component
from .scoring import score_spans


@dataclass
class SpanPredictions:
    """The dev candidates that can be predicted, in the component's order
    (doc, start, width). Token positions run over the dev set laid end to
    end (``doc_starts[d]`` is doc d's first token), so spans of different
    docs never overlap."""

    docs: List[Doc]  # the dev docs' tokens after the components before this one
    classes: List[str]  # the component's output columns, O first
    starts: numpy.ndarray  # int64 first token
    ends: numpy.ndarray  # int64 exclusive end
    doc_ids: numpy.ndarray  # int64
    labels: numpy.ndarray  # int64 most probable entity column (>= 1)
    confidence: numpy.ndarray  # float32 p(label), as the component computes it
    entity_prob: numpy.ndarray  # float32 1 - p(O)
    is_argmax: numpy.ndarray  # bool: the label beats O (the argmax rule predicts it)
    doc_starts: numpy.ndarray  # int64, n_docs + 1
    floor: float  # candidates below it (and not argmax) were left out

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.doc_starts[-1])

    @classmethod
    def from_parts(
        cls, docs: List[Doc], classes: List[str], parts: Sequence[Tuple[numpy.ndarray, ...]], doc_starts: numpy.ndarray, floor: float
    ) -> "SpanPredictions":
        """The predictions of batches, each part (starts, ends, doc ids, labels,
        p(label), p(O), is argmax) at positions over the dev set already."""
        dtypes = ("int64", "int64", "int64", "int64", "float32", "float32", "bool")
        starts, ends, doc_ids, labels, confidence, p_o, is_argmax = (
            numpy.concatenate([part[i] for part in parts]).astype(dtype) if parts else numpy.zeros((0,), dtype=dtype)
            for i, dtype in enumerate(dtypes)
        )
        return cls(
            docs=docs, classes=classes, starts=starts, ends=ends, doc_ids=doc_ids, labels=labels, confidence=confidence,
            entity_prob=1.0 - p_o, is_argmax=is_argmax, doc_starts=doc_starts, floor=float(floor),
        )


def predict_spans(
    nlp: Language, component: str, gold_docs: Sequence[Doc], *, floor: float, batch_size: int = 128
) -> SpanPredictions:
    """The pipeline up to ``component`` (a ``sampled_spancat``, checked by
    ``span_component``) on copies of the gold docs' tokens, then the
    component's model (``evaluation.scoring.score_spans``), keeping every candidate
    whose best entity probability is at least ``floor`` or whose argmax
    class is an entity: no threshold >= ``floor`` and no argmax rule can
    predict any other."""
    lengths = numpy.asarray([len(doc) for doc in gold_docs], dtype="int64")
    doc_starts = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
    docs: List[Doc] = []
    parts = []
    for batch, spans in score_spans(nlp, component, gold_docs, partial(_decision_inputs, floor=floor), batch_size=batch_size):
        # batch positions -> positions over the dev set laid end to end
        offset, first = doc_starts[len(docs)], len(docs)
        c = spans.columns
        parts.append((spans.starts + offset, spans.ends + offset, spans.doc_ids + first, c["label"], c["confidence"], c["p_o"], c["is_argmax"]))
        docs.extend(batch)
    return SpanPredictions.from_parts(docs, list(span_component(nlp, component).classes), parts, doc_starts, floor)


def _decision_inputs(xp: Any, logits: Floats2d, *, floor: float) -> Choice:
    """Per candidate that passes ``floor``: its best entity label, p(label),
    p(O) and whether the label is the argmax."""
    label, confidence, is_argmax = best_entity(xp, logits)
    p_o = probability_of(xp, logits, 0)
    # float32 on both sides, as the component compares a probability with its threshold
    keep = xp.nonzero((confidence >= numpy.float32(floor)) | is_argmax)[0]
    return Choice(keep, {"label": label[keep], "confidence": confidence[keep], "p_o": p_o[keep], "is_argmax": is_argmax[keep]})

"""One prediction pass of a ``sampled_spancat`` over dev docs, kept on the host.

A threshold search decodes the dev set hundreds of times and a reliability
table reads each decoded span's probabilities once; neither needs the
model again. Per batch the component's logits are reduced on the device to
what the decision reads (``best_entity``: the most probable entity label,
its probability, whether it is the argmax, and p(O)), for the candidates that
pass a floor only, and copied to the host in one transfer.
"""
from dataclasses import dataclass
from typing import List, Sequence

import numpy
from spacy.language import Language
from spacy.tokens import Doc

from ..pipeline.sampled_spancat import SampledSpanCategorizer, best_entity, span_component


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


def predict_spans(
    nlp: Language, component: str, gold_docs: Sequence[Doc], *, floor: float, batch_size: int = 128
) -> SpanPredictions:
    """Run the pipeline up to ``component`` on copies of the gold docs'
    tokens (their annotations are not seen), then the component's model, and
    keep every candidate whose best entity probability is at least ``floor``
    or whose argmax class is an entity: no threshold >= ``floor`` and no
    argmax rule can predict any other."""
    pipe = span_component(nlp, component)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold_docs]
    # the upstream components only: a listener reads the tok2vec's doc.tensor
    downstream = nlp.pipe_names[nlp.pipe_names.index(component) :]
    docs = list(nlp.pipe(docs, disable=downstream, batch_size=batch_size))
    lengths = numpy.asarray([len(doc) for doc in docs], dtype="int64")
    doc_starts = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
    parts = []
    for first in range(0, len(docs), batch_size):
        rows = _batch_rows(pipe, docs[first : first + batch_size], floor)
        rows[:, :2] += doc_starts[first]
        rows[:, 2] += first
        parts.append(rows)
    rows = numpy.concatenate(parts) if parts else numpy.zeros((0, 7), dtype="int64")
    return SpanPredictions(
        docs=docs,
        classes=list(pipe.classes),
        starts=rows[:, 0],
        ends=rows[:, 1],
        doc_ids=rows[:, 2],
        labels=rows[:, 3],
        confidence=_bits_to_float32(rows[:, 4]),
        entity_prob=1.0 - _bits_to_float32(rows[:, 5]),
        is_argmax=rows[:, 6].astype(bool),
        doc_starts=doc_starts,
        floor=float(floor),
    )


def _batch_rows(pipe: SampledSpanCategorizer, docs: List[Doc], floor: float) -> numpy.ndarray:
    """int64 host rows (start, exclusive end, doc, label, p(label) bits,
    p(O) bits, is_argmax) of the batch's candidates that pass ``floor``,
    positions and doc ids within the batch."""
    candidates, logits = pipe.predict(docs)
    if not logits.shape[0]:
        return numpy.zeros((0, 7), dtype="int64")
    xp = pipe.model.ops.xp
    label, confidence, is_argmax = best_entity(xp, logits)
    p_o = (1.0 / xp.exp(logits - logits[:, :1]).sum(axis=1)).astype("float32")
    # float32 on both sides, as the component compares a probability with its threshold
    keep = xp.nonzero((confidence >= numpy.float32(floor)) | is_argmax)[0]
    columns = [
        candidates.starts[keep],
        candidates.ends[keep] + 1,
        candidates.doc_ids[keep],
        label[keep],
        confidence[keep].view("int32"),
        p_o[keep].view("int32"),
        is_argmax[keep].astype("int32"),
    ]
    return pipe.model.ops.to_numpy(xp.stack(columns, axis=1)).astype("int64")


def _bits_to_float32(column: numpy.ndarray) -> numpy.ndarray:
    # the probabilities travelled as the int32 bits of their float32 values
    return numpy.ascontiguousarray(column.astype("int32")).view("float32")

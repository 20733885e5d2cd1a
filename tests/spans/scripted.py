"""A sampled_spancat whose predictions are written by hand: each doc's
candidates get the class probabilities a table gives them (by doc text and
token span), every other candidate is O-sure. Tests of the threshold
search and of the calibration tables then know every probability, and so
every decision and score."""
from typing import Dict, Sequence, Tuple

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import NumpyOps

from spacy_imbalance.models.span_scorer import SpanScores
from spacy_imbalance.spans.candidates import enumerate_candidates

NAME = "sampled_spancat"
# doc text -> {(start, exclusive end): probabilities of O, then each label}
Table = Dict[str, Dict[Tuple[int, int], Sequence[float]]]


def scripted_nlp(table: Table, labels: Sequence[str], *, max_span_width: int = 3) -> Language:
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"max_span_width": max_span_width})
    pipe = nlp.get_pipe(NAME)
    pipe.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))], nlp=nlp, labels=list(labels))
    n_classes = len(labels) + 1
    other = numpy.full(n_classes, 0.02 / (n_classes - 1), dtype="float64")
    other[0] = 0.98

    def predict(docs):
        docs = list(docs)
        lengths = [len(doc) for doc in docs]
        # the table is read on a host copy of the candidates: no device copy to count
        host = enumerate_candidates(NumpyOps(), lengths, pipe.max_span_width)
        starts, ends, doc_ids = host.starts, host.ends, host.doc_ids
        offsets = numpy.concatenate([[0], numpy.cumsum(lengths)])
        probs = numpy.tile(other, (len(starts), 1))
        for k, (start, end, d) in enumerate(zip(starts, ends, doc_ids)):
            span = (int(start - offsets[d]), int(end + 1 - offsets[d]))
            probs[k] = table.get(docs[d].text, {}).get(span, other)
        ops = pipe.model.ops
        candidates = enumerate_candidates(ops, lengths, pipe.max_span_width)
        return SpanScores(candidates, ops.asarray2f(numpy.log(probs).astype("float32")))

    pipe.predict = predict
    return nlp


def gold_doc(nlp: Language, text: str, ents: Sequence[Tuple[int, int, str]]) -> Doc:
    """A gold doc (words split on spaces) with entities by token span."""
    words = text.split(" ")
    doc = Doc(nlp.vocab, words=words, spaces=[True] * (len(words) - 1) + [False])
    doc.set_ents([Span(doc, start, end, label=label) for start, end, label in ents], default="outside")
    return doc


def examples(golds: Sequence[Doc]) -> list:
    """Examples whose predicted docs are the gold docs' tokens, unannotated."""
    return [Example(Doc(g.vocab, words=[t.text for t in g], spaces=[bool(t.whitespace_) for t in g]), g) for g in golds]

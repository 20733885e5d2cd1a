"""Per-label decision thresholds for spaCy's own ``spancat_singlelabel``,
searched on dev exactly as ``sampled_spancat``'s are (``spans.py``), so that
a table which tunes our component compares it with a built-in tuned the same
way rather than with the built-in's argmax.

spaCy's single-label span categorizer scores every suggested span with a
softmax over its labels and a negative label (the last column) and keeps a
span when an entity label is the argmax. That is ``sampled_spancat``'s
argmax rule with O moved last, so its candidates become ``SpanPredictions``
with the columns reordered O first, and the same search, decision rule and
gold matching apply. Two targets: the entities decoded from its spans
(``on="entities"``, greedily by probability against the gold ``doc.ents``:
what ``spacy-imbalance evaluate`` and the benchmarks score a span system on,
``scorers.evaluation.decode_span_entities``), or its spans themselves
(``on="spans"``, against the gold of its ``spans_key``, overlapping spans
each scored when ``allow_overlap``, as its own scorer does).

spaCy's component cannot carry such thresholds: the tuned result is a score
(of dev and of test data, each predicted once, ``decided_examples`` for a
full report), not a pipeline.
"""
from typing import Any, Dict, List, Literal, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import SpanCategorizer
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import minibatch

from ...decisions.thresholds import Thresholds
from ...scorers.counts import ents_counts
from ...scorers.evaluation import score_report
from ..matching import DevMatcher, check_dev_gold
from ..predictions import SpanPredictions
from .grid import check_grid
from .spans import DEFAULT_MIN_GAIN, SpanThresholdSearch, decide, search_thresholds


class BuiltinMatcher(DevMatcher):
    """``DevMatcher`` for a built-in whose spans may overlap."""

    def __init__(self, predictions: SpanPredictions, gold_docs: Sequence[Doc], gold_key: str, *, allow_overlap: bool) -> None:
        super().__init__(predictions, gold_docs, gold_key)
        self.allow_overlap = allow_overlap

    def decode(self, predicted: numpy.ndarray) -> numpy.ndarray:
        if self.allow_overlap:
            return numpy.flatnonzero(predicted)
        return super().decode(predicted)


def singlelabel_component(nlp: Language, component: str) -> SpanCategorizer:
    """The pipeline's ``component``, checked to be a single-label spaCy span
    categorizer with a negative label (``spancat_singlelabel``)."""
    if component not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {component!r}; its components: {', '.join(nlp.pipe_names) or 'none'}")
    pipe = nlp.get_pipe(component)
    if not isinstance(pipe, SpanCategorizer) or not getattr(pipe, "add_negative_label", False):
        raise ValueError(
            f"{component!r} is a {type(pipe).__name__}, not spaCy's spancat_singlelabel (a span categorizer with a "
            "negative label): its thresholds are searched with `spacy-imbalance tune-thresholds` or not at all"
        )
    return pipe


def builtin_matcher(
    nlp: Language, component: str, gold_docs: Sequence[Doc], *, floor: float, batch_size: int = 128,
    on: Literal["entities", "spans"] = "entities",
) -> DevMatcher:
    """The gold docs predicted once by spaCy's ``spancat_singlelabel``
    ``component`` (every suggested candidate whose best entity probability
    is at least ``floor`` or whose argmax is an entity) and matched with the
    gold entities, or with the gold spans of its ``spans_key`` (``on``,
    module docstring)."""
    pipe = singlelabel_component(nlp, component)
    if on not in ("entities", "spans"):
        raise ValueError(f"on must be 'entities' (decoded, as the benchmarks score) or 'spans', got {on!r}")
    key = str(pipe.cfg["spans_key"]) if on == "spans" else None
    check_dev_gold(gold_docs, key)
    predictions = predict_builtin_spans(nlp, component, gold_docs, floor=floor, batch_size=batch_size)
    if key is None:
        return DevMatcher(predictions, gold_docs)
    return BuiltinMatcher(predictions, gold_docs, key, allow_overlap=bool(pipe.cfg.get("allow_overlap", True)))


def decided_examples(matcher: DevMatcher, gold_docs: Sequence[Doc], thresholds: Thresholds) -> List[Example]:
    """The gold docs paired with their predicted copies carrying the decoded
    entities under ``thresholds`` as ``doc.ents``: a full report with
    per-sentence counts (``scorers.evaluation.score_report``) of a decision
    that no pipeline makes. The entities target only (overlapping spans are
    no ``doc.ents``)."""
    if isinstance(matcher, BuiltinMatcher):
        raise ValueError("decided_examples gives decoded entities: build the matcher with on='entities'")
    predictions = matcher.predictions
    kept = matcher.decode(decide(predictions, thresholds))
    per_doc: List[List[Span]] = [[] for _ in predictions.docs]
    for i in kept:
        d = int(predictions.doc_ids[i])
        offset = int(predictions.doc_starts[d])
        label = predictions.classes[int(predictions.labels[i])]
        doc = predictions.docs[d]
        per_doc[d].append(Span(doc, int(predictions.starts[i]) - offset, int(predictions.ends[i]) - offset, label=label))
    examples = []
    for doc, gold, spans in zip(predictions.docs, gold_docs, per_doc):
        copy = doc.copy()
        copy.ents = [Span(copy, span.start, span.end, label=span.label_) for span in sorted(spans)]
        examples.append(Example(copy, gold))
    return examples


def predict_builtin_spans(nlp: Language, component: str, gold_docs: Sequence[Doc], *, floor: float, batch_size: int = 128) -> SpanPredictions:
    """``evaluation.predictions.predict_spans`` for spaCy's single-label span
    categorizer: its suggester's candidates and softmax scores on copies of
    the gold docs' tokens, with O (its negative label, the last column)
    moved first."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    pipe = singlelabel_component(nlp, component)
    labels = list(pipe.labels)
    downstream = nlp.pipe_names[nlp.pipe_names.index(component) :]
    lengths = numpy.asarray([len(doc) for doc in gold_docs], dtype="int64")
    doc_starts = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
    docs: List[Doc] = []
    parts = []
    for batch in minibatch(gold_docs, size=batch_size):
        copies = [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in batch]
        copies = list(nlp.pipe(copies, disable=downstream, batch_size=batch_size))
        candidates, scores = pipe.predict(copies)
        ops = pipe.model.ops
        # O first, as sampled_spancat's columns (scores are probabilities: the softmax is in the model)
        probs = ops.to_numpy(scores).astype("float32")
        probs = numpy.concatenate([probs[:, -1:], probs[:, :-1]], axis=1)
        spans = ops.to_numpy(candidates.dataXd).astype("int64")
        lengths_per_doc = ops.to_numpy(candidates.lengths).astype("int64")
        doc_ids = numpy.repeat(numpy.arange(len(copies), dtype="int64"), lengths_per_doc)
        if len(probs):
            entity = probs[:, 1:]
            label = entity.argmax(axis=1) + 1
            confidence = entity.max(axis=1)
            is_argmax = probs.argmax(axis=1) != 0
            keep = numpy.flatnonzero((confidence >= numpy.float32(floor)) | is_argmax)
            # batch positions -> positions over the dev set laid end to end
            offset = doc_starts[len(docs) + doc_ids[keep]]
            parts.append((
                spans[keep, 0] + offset, spans[keep, 1] + offset, doc_ids[keep] + len(docs),
                label[keep], confidence[keep], probs[keep, 0], is_argmax[keep],
            ))
        docs.extend(copies)
    return SpanPredictions.from_parts(docs, ["O", *labels], parts, doc_starts, floor)


def tune_and_score(
    nlp: Language, component: str, dev_docs: Sequence[Doc], test_docs: Sequence[Doc], *, grid: Sequence[float],
    shared: bool = True, min_gain: float = DEFAULT_MIN_GAIN, n_resamples: int = 1000, seed: int = 0,
) -> Tuple[SpanThresholdSearch, Dict[str, Any]]:
    """Thresholds searched on ``dev_docs`` alone (``search_thresholds`` with
    ``calibrate``'s defaults: one shared threshold, then per label with a
    margin), then the report ``spacy-imbalance evaluate`` would write for
    ``test_docs`` decided with them (on the decoded entities)."""
    grid = check_grid(grid)
    dev = builtin_matcher(nlp, component, dev_docs, floor=min(grid))
    search = search_thresholds(dev, {}, grid, shared=shared, min_gain=min_gain)
    test = builtin_matcher(nlp, component, test_docs, floor=min(grid))
    report = score_report(ents_counts(decided_examples(test, test_docs, search.best)), n_resamples=n_resamples, seed=seed)
    report["target"] = f"ents decoded from spans:{singlelabel_component(nlp, component).cfg['spans_key']}"
    return search, report

"""From scored candidates to entities: which candidates a ``sampled_spancat``
predicts as entities (``entity_candidates``: the argmax rule, or per-label
thresholds), and the greedy decoder that keeps non-overlapping ones
(``greedy_non_overlapping``), which the component (``entity_spans``), the
threshold search and the audit share.
"""
from functools import partial
from typing import Any, List, Optional, Sequence, Tuple, cast

import numpy
from spacy.tokens import Doc, Span
from thinc.api import Ops
from thinc.types import Floats1d, Floats2d, Ints1d

from ..decisions.softmax import probability_of
from ..decisions.thresholds import predicted
from .candidates import Candidates
from .scoring import Choice, HostSpans, best_entity, choose_spans


def entity_candidates(ops: Ops, candidates: Candidates, logits: Floats2d, thresholds: Optional[Floats1d] = None) -> HostSpans:
    """The candidates predicted as entities, on the host with their
    ``label`` (class column) and its probability (``confidence``). Without
    ``thresholds`` these are the candidates whose argmax class is not O;
    with them (``decisions.thresholds.threshold_vector``, on the device) each
    candidate's most probable entity label l is predicted by the rule
    (``decisions.thresholds.predicted``)."""
    # an empty batch has no threshold to look up: it chooses nothing either way
    if thresholds is None or not len(candidates):
        return choose_spans(ops, candidates, logits, _by_argmax)
    return choose_spans(ops, candidates, logits, partial(_by_thresholds, thresholds=thresholds))


def _by_argmax(xp: Any, logits: Floats2d) -> Choice:
    """The candidates whose argmax class is not O, their probability
    computed for those (few) rows only."""
    # argmax's int64 classes made int32: a 1-d int array, which Ints1d
    # describes (thinc types astype of any 1-d array as the generic _Array1d)
    best = cast(Ints1d, logits.argmax(axis=1).astype("int32"))
    entity = xp.nonzero(best > 0)[0]
    best = best[entity]
    return Choice(entity, {"label": best, "confidence": probability_of(xp, logits[entity], best)})


def _by_thresholds(xp: Any, logits: Floats2d, *, thresholds: Floats1d) -> Choice:
    """Each candidate's most probable entity label l, predicted by
    thresholds[l] or, for ``ARGMAX``, where l beats O: p(l) is needed for
    every row to decide, one softmax denominator per candidate."""
    label, confidence, is_argmax = best_entity(xp, logits)
    entity = xp.nonzero(predicted(xp, thresholds[label], confidence, is_argmax))[0]
    return Choice(entity, {"label": label[entity], "confidence": confidence[entity]})


def greedy_non_overlapping(starts: numpy.ndarray, ends: numpy.ndarray, scores: numpy.ndarray) -> List[int]:
    """Spans (token ``starts``, exclusive ``ends``) kept greedily by descending
    score, each only when it overlaps no span kept before it (Li et al. 2021,
    Sec. 2.3). Returns their indices in text order. Ties keep the earlier
    index, so the result does not depend on the sort's stability."""
    if len(starts) == 0:
        return []
    order = numpy.lexsort((numpy.arange(len(scores)), -numpy.asarray(scores)))
    taken = numpy.zeros(int(numpy.max(ends)), dtype=bool)
    kept = []
    for i in order:
        start, end = int(starts[i]), int(ends[i])
        if not taken[start:end].any():
            taken[start:end] = True
            kept.append(int(i))
    return sorted(kept, key=lambda i: int(starts[i]))


def entity_spans(doc: Doc, entities: HostSpans, classes: Sequence[str]) -> Tuple[List[Span], List[int]]:
    """One doc's chosen candidates (``entity_candidates(...).by_doc``) as
    spans labelled by their ``label`` column (``classes``: the name of each
    column), and the indices of those the greedy decoder keeps by their
    ``confidence``."""
    labels = entities.columns["label"]
    spans = [Span(doc, int(start), int(end), label=classes[int(label)]) for start, end, label in zip(entities.starts, entities.ends, labels)]
    return spans, greedy_non_overlapping(entities.starts, entities.ends, entities.columns["confidence"])

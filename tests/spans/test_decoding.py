"""From scored candidates to entities: the argmax rule and per-label
thresholds choosing entity candidates, and the greedy span decoder."""
import numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from thinc.api import NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.decoding import entity_candidates, greedy_non_overlapping
from spacy_imbalance.decisions.thresholds import threshold_vector

CLASSES = ["O", "LOC", "PER"]


def rows(spans):
    """A choice's candidates and labels as one (n, 4) array."""
    return numpy.stack([spans.starts, spans.ends, spans.doc_ids, spans.columns["label"]], axis=1)


def test_thresholds_without_a_label_decide_as_null():
    """The threshold path with every label on the argmax rule selects the
    same spans, labels and probabilities as the null path, on random scores."""
    ops = NumpyOps()
    candidates = enumerate_candidates(ops, [5, 0, 9], 8)
    logits = numpy.random.default_rng(1).normal(size=(len(candidates), 3)).astype("f")
    logits[:, 0] += 0.5
    spans = entity_candidates(ops, candidates, logits)
    all_argmax = ops.asarray1f(threshold_vector(CLASSES, {}))
    spans_t = entity_candidates(ops, candidates, logits, all_argmax)
    assert 0 < len(spans) < len(candidates)
    numpy.testing.assert_array_equal(rows(spans_t), rows(spans))
    numpy.testing.assert_allclose(spans_t.columns["confidence"], spans.columns["confidence"], rtol=1e-6)


def test_no_candidates_choose_nothing_with_either_rule():
    ops = NumpyOps()
    candidates = enumerate_candidates(ops, [0, 0], 8)
    for thresholds in (None, ops.asarray1f(threshold_vector(CLASSES, {"LOC": 0.5}))):
        spans = entity_candidates(ops, candidates, ops.alloc2f(0, 3), thresholds)
        assert len(spans) == 0 and spans.columns["label"].shape == spans.columns["confidence"].shape == (0,)
        assert [len(part) for part in spans.by_doc([0, 0])] == [0, 0]


def test_greedy_decoder_keeps_the_best_non_overlapping_spans():
    starts = numpy.array([0, 1, 3, 0, 4])
    ends = numpy.array([2, 3, 4, 1, 6])
    scores = numpy.array([0.9, 0.95, 0.5, 0.6, 0.5])
    # [1, 3) (0.95) first; [0, 2) overlaps it; [0, 1), [3, 4) and [4, 6) are free
    assert greedy_non_overlapping(starts, ends, scores) == [3, 1, 2, 4]
    assert greedy_non_overlapping(numpy.array([]), numpy.array([]), numpy.array([])) == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 15), st.integers(1, 4), st.floats(0, 1)), max_size=25))
def test_greedy_decoder_never_overlaps_and_is_maximal(spans):
    starts = numpy.array([s for s, _, _ in spans], dtype=int)
    ends = numpy.array([s + w for s, w, _ in spans], dtype=int)
    scores = numpy.array([p for _, _, p in spans])
    kept = greedy_non_overlapping(starts, ends, scores)
    covered = numpy.zeros(20, dtype=int)
    for k in kept:
        covered[starts[k] : ends[k]] += 1
    assert covered.max(initial=0) <= 1
    # every dropped span overlaps a kept one with a score at least as high
    for i in set(range(len(spans))) - set(kept):
        assert any(starts[k] < ends[i] and starts[i] < ends[k] and scores[k] >= scores[i] for k in kept)

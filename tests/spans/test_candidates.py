"""Span candidates and their gold classes."""
import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates, n_candidates, touching
from spacy_imbalance.spans.gold import UNKNOWN, count_gold, span_targets

OPS = NumpyOps()


def brute_force(lengths, max_width):
    """(global start, global end inclusive, doc) of every span, by doc, start, width."""
    spans, offset = [], 0
    for d, n in enumerate(lengths):
        for i in range(n):
            for w in range(1, max_width + 1):
                if i + w <= n:
                    spans.append((offset + i, offset + i + w - 1, d))
        offset += n
    return spans


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=0, max_size=5), st.integers(1, 6))
def test_candidates_equal_brute_force(lengths, max_width):
    cands = enumerate_candidates(OPS, lengths, max_width)
    got = list(zip(cands.starts.tolist(), cands.ends.tolist(), cands.doc_ids.tolist()))
    assert got == brute_force(lengths, max_width)
    assert cands.doc_counts == [n_candidates(n, max_width) for n in lengths]
    assert sum(cands.doc_counts) == len(cands)
    # index() finds every candidate from its start and width
    if len(cands):
        assert cands.index(cands.starts, cands.widths).tolist() == list(range(len(cands)))


def test_candidate_count_is_linear_in_length():
    # n·L - L(L-1)/2, not n(n+1)/2
    assert n_candidates(1000, 8) == 1000 * 8 - 28
    assert n_candidates(3, 8) == 6 and n_candidates(0, 8) == 0
    assert len(enumerate_candidates(OPS, [1000], 8)) == 7972


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, None])
def test_max_width_is_validated(bad):
    with pytest.raises(ValueError, match="max_span_width must be an integer >= 1"):
        enumerate_candidates(OPS, [3], bad)


def test_a_width_beyond_the_docs_costs_no_more_than_the_docs_widths():
    # issue 31 M11: the (tokens x max_width) mask was built for the whole
    # width: 10 million columns for a 10-token doc, 100 MB of booleans
    import tracemalloc

    tracemalloc.start()
    try:
        wide = enumerate_candidates(OPS, [10, 3, 0], 10_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    exact = enumerate_candidates(OPS, [10, 3, 0], 10)
    assert wide.starts.tolist() == exact.starts.tolist() and wide.ends.tolist() == exact.ends.tolist()
    assert wide.doc_counts == [55, 6, 0] and wide.first.tolist() == exact.first.tolist()


def test_touching_marks_spans_over_a_masked_token():
    cands = enumerate_candidates(OPS, [3], 2)  # (0,0) (0,1) (1,1) (1,2) (2,2)
    mask = numpy.array([False, True, False])
    assert touching(OPS, cands, mask).tolist() == [False, True, True, True, False]


def make_example(nlp, words, ents, *, missing=(), masked=(), spans=None):
    predicted = Doc(nlp.vocab, words=words)
    reference = Doc(nlp.vocab, words=words)
    reference.set_ents(
        [Span(reference, s, e, label=l) for s, e, l in ents],
        missing=[reference[i : i + 1] for i in missing],  # annotation unknown
        default="outside",
    )
    reference.spans["masked"] = [Span(reference, s, e, label="X") for s, e in masked]
    if spans is not None:
        reference.spans["gold"] = [Span(reference, s, e, label=l) for s, e, l in spans]
    return Example(predicted, reference)


def test_span_targets_on_a_hand_made_batch():
    nlp = spacy.blank("en")
    eg1 = make_example(nlp, ["Kate", "Bush", "sings", "well"], [(0, 2, "PER")], missing=[3], masked=[(2, 3)])
    eg2 = make_example(nlp, ["in", "New", "York", "City", "now"], [(1, 4, "LOC")])
    cands = enumerate_candidates(OPS, [4, 5], 2)
    targets = span_targets(OPS, [eg1, eg2], cands, {"LOC": 0, "PER": 1}, masked_key="masked")
    classes = dict(zip(zip(cands.starts.tolist(), cands.ends.tolist()), targets.classes.tolist()))
    assert classes[(0, 1)] == 2  # Kate Bush = PER (label 1 -> class 2)
    assert classes[(0, 0)] == 0 and classes[(1, 2)] == 0
    assert classes[(3, 3)] == UNKNOWN and classes[(2, 3)] == UNKNOWN  # touch the unannotated "well"
    # New York City is 3 tokens, wider than 2: no candidate, counted
    assert targets.n_too_wide == 1 and targets.n_gold == 1
    assert all(c in (0, UNKNOWN) for (s, e), c in classes.items() if s >= 4)
    masked = dict(zip(zip(cands.starts.tolist(), cands.ends.tolist()), targets.masked.tolist()))
    assert [span for span, flag in masked.items() if flag] == [(2, 2)]
    assert count_gold([eg1, eg2], 2, None) == (2, 1)


def test_span_targets_from_a_span_group_and_unknown_labels():
    nlp = spacy.blank("en")
    eg = make_example(nlp, ["a", "b", "c"], [], spans=[(0, 2, "X"), (1, 2, "Y")])
    cands = enumerate_candidates(OPS, [3], 3)
    targets = span_targets(OPS, [eg], cands, {"X": 0, "Y": 1}, gold_key="gold", masked_key=None)
    classes = dict(zip(zip(cands.starts.tolist(), cands.ends.tolist()), targets.classes.tolist()))
    assert classes[(0, 1)] == 1 and classes[(1, 1)] == 2 and classes[(0, 2)] == 0
    assert targets.masked is None
    with pytest.raises(ValueError, match="gold label 'Y' is not among the component's labels"):
        span_targets(OPS, [eg], cands, {"X": 0}, gold_key="gold")


def test_fast_gold_path_equals_the_aligned_biluo_path():
    """Identical tokens take array reads; they must give what the per-token
    alignment gives. Another tokenization takes the alignment."""
    from spacy_imbalance.spans.gold import aligned_gold_spans, same_tokens, spans_from_aligned_ner

    nlp = spacy.blank("en")
    eg = make_example(nlp, ["Kate", "Bush", "sings", "in", "New", "York"], [(0, 2, "PER"), (4, 6, "LOC")], missing=[3])
    assert same_tokens(eg)
    fast, fast_missing = aligned_gold_spans(eg, None)
    slow, slow_missing = spans_from_aligned_ner(eg)
    assert fast == slow == [(0, 2, "PER"), (4, 6, "LOC")]
    assert fast_missing.tolist() == slow_missing.tolist() == [False, False, False, True, False, False]
    # "New York" as one predicted token: no longer identical, still aligned
    reference = eg.reference
    predicted = Doc(nlp.vocab, words=["Kate", "Bush", "sings", "in", "New York"], spaces=[True, True, True, True, False])
    other = Example(predicted, reference)
    assert not same_tokens(other)
    assert aligned_gold_spans(other, None)[0] == [(0, 2, "PER"), (4, 5, "LOC")]


def test_rejected_spans_are_known_negatives_unless_gold():
    nlp = spacy.blank("en")
    eg = make_example(nlp, ["Kate", "Bush", "sings", "well"], [(0, 2, "PER")], missing=[3])
    reference = eg.reference
    # "well" touches the unannotated token, "Bush" is an O candidate, "Kate Bush" is also gold
    reference.spans["incorrect_spans"] = [Span(reference, s, e, label="PER") for s, e in [(3, 4), (1, 2), (0, 2)]]
    cands = enumerate_candidates(OPS, [4], 2)
    keys = list(zip(cands.starts.tolist(), cands.ends.tolist()))
    plain = dict(zip(keys, span_targets(OPS, [eg], cands, {"PER": 0}, masked_key=None).classes.tolist()))
    assert plain[(3, 3)] == UNKNOWN
    targets = span_targets(OPS, [eg], cands, {"PER": 0}, masked_key=None, incorrect_key="incorrect_spans")
    classes = dict(zip(keys, targets.classes.tolist()))
    known = dict(zip(keys, targets.known.tolist()))
    # the reviewer's word makes "well" O; gold keeps "Kate Bush"; the rest is as without the group
    assert classes == {**plain, (3, 3): 0}
    assert [span for span, flag in known.items() if flag] == [(1, 1), (3, 3)]
    # no example with the group: no flags at all, as for the masked entities
    assert span_targets(OPS, [make_example(nlp, ["a"], [])], enumerate_candidates(OPS, [1], 1), {"PER": 0},
                        incorrect_key="incorrect_spans").known is None

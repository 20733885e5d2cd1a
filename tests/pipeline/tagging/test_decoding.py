"""Tag schemes and the constrained Viterbi decoder."""
import itertools

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import NumpyOps
from thinc.util import has_cupy_gpu

from spacy_imbalance.pipeline.tagging.decoding import constrained_viterbi
from spacy_imbalance.pipeline.tagging.tags import MISSING, gold_tag_ids, tag_names, tag_spans, transition_masks

OPS = NumpyOps()
# the decoder runs through ops.xp: run it on a GPU too where there is one
ALL_OPS = [OPS]
if has_cupy_gpu:
    from thinc.api import CupyOps

    ALL_OPS.append(CupyOps())


def is_valid(path, start, trans, end) -> bool:
    if len(path) == 0:
        return True
    ok = start[path[0]] and end[path[-1]]
    return bool(ok and all(trans[a, b] for a, b in zip(path[:-1], path[1:])))


def brute_force(log_probs, start, trans, end):
    """Best valid sequence by enumerating all of them."""
    n_tokens, n_tags = log_probs.shape
    best, best_path = -numpy.inf, None
    for path in itertools.product(range(n_tags), repeat=n_tokens):
        if is_valid(path, start, trans, end):
            score = sum(log_probs[i, t] for i, t in enumerate(path))
            if score > best:
                best, best_path = score, path
    return list(best_path), best


def test_tag_names_put_o_first():
    assert tag_names(["LOC", "PER"], "BIO") == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    assert tag_names(["X"], "BILUO") == ["O", "B-X", "I-X", "L-X", "U-X"]
    with pytest.raises(ValueError, match="tag_scheme"):
        tag_names(["X"], "IOB1")


def test_bio_masks_by_hand():
    tags = tag_names(["A", "B"], "BIO")  # O B-A I-A B-B I-B
    start, trans, end = transition_masks(tags, "BIO")
    assert start.tolist() == [True, True, False, True, False]
    assert end.all()
    # I-A only after B-A or I-A
    assert trans[:, 2].tolist() == [False, True, True, False, False]
    assert trans[:, 4].tolist() == [False, False, False, True, True]
    # O, B-A and B-B may follow anything
    assert trans[:, [0, 1, 3]].all()


def test_biluo_masks_by_hand():
    tags = tag_names(["A"], "BILUO")  # O B-A I-A L-A U-A
    start, trans, end = transition_masks(tags, "BILUO")
    assert start.tolist() == [True, True, False, False, True]
    assert end.tolist() == [True, False, False, True, True]
    assert trans[1].tolist() == [False, False, True, True, False]  # after B-A: I-A or L-A
    assert trans[3].tolist() == [True, True, False, False, True]  # after L-A: a fresh start


def test_argmax_invalid_sequence_is_repaired():
    tags = tag_names(["A", "B"], "BIO")
    start, trans, end = transition_masks(tags, "BIO")
    # the per-token argmax is O I-A I-B: invalid twice
    lp = numpy.log(
        numpy.array(
            [[0.6, 0.3, 0.05, 0.03, 0.02], [0.1, 0.35, 0.45, 0.05, 0.05], [0.1, 0.05, 0.3, 0.15, 0.4]],
            dtype="float32",
        )
    )
    (path,) = constrained_viterbi(OPS, [lp], start, trans, end)
    expected, _ = brute_force(lp, start, trans, end)
    assert path.tolist() == expected
    assert is_valid(path.tolist(), start, trans, end)


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=4),
    scheme=st.sampled_from(["BIO", "BILUO"]),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_decoder_equals_brute_force_and_is_valid(lengths, scheme, seed):
    """Batched decoding of docs of different lengths (padding included) gives,
    per doc, the best valid sequence found by exhaustive search."""
    labels = ["A", "B"] if scheme == "BIO" else ["A"]
    tags = tag_names(labels, scheme)
    start, trans, end = transition_masks(tags, scheme)
    rng = numpy.random.default_rng(seed)
    log_probs = []
    for n in lengths:
        logits = rng.normal(scale=3.0, size=(n, len(tags))).astype("float32")
        log_probs.append(logits - numpy.log(numpy.exp(logits).sum(axis=1, keepdims=True)))
    paths = constrained_viterbi(OPS, log_probs, start, trans, end)
    assert [len(p) for p in paths] == lengths
    for path, lp in zip(paths, log_probs):
        assert is_valid(path.tolist(), start, trans, end)
        if len(lp):
            _, best = brute_force(lp, start, trans, end)
            score = sum(lp[i, t] for i, t in enumerate(path.tolist()))
            assert score == pytest.approx(best, abs=1e-4)


def test_empty_batch_and_empty_docs():
    tags = tag_names(["A"], "BIO")
    masks = transition_masks(tags, "BIO")
    assert constrained_viterbi(OPS, [], *masks) == []
    paths = constrained_viterbi(OPS, [numpy.zeros((0, 3), dtype="float32")] * 2, *masks)
    assert [p.tolist() for p in paths] == [[], []]


def test_tag_spans_reads_bio_and_biluo():
    doc = Doc(Vocab(), words=["a", "b", "c", "d", "e"])
    bio = tag_names(["X", "Y"], "BIO")  # O B-X I-X B-Y I-Y
    spans = tag_spans(doc, [1, 2, 1, 0, 3], bio)
    assert [(s.start, s.end, s.label_) for s in spans] == [(0, 2, "X"), (2, 3, "X"), (4, 5, "Y")]
    biluo = tag_names(["X"], "BILUO")  # O B-X I-X L-X U-X
    spans = tag_spans(doc, [4, 1, 2, 3, 4], biluo)
    assert [(s.start, s.end) for s in spans] == [(0, 1), (1, 4), (4, 5)]


def test_gold_tag_ids_marks_missing_and_converts_scheme():
    vocab = Vocab()
    predicted = Doc(vocab, words=["New", "York", "is", "big", "today"])
    reference = Doc(vocab, words=["New", "York", "is", "big", "today"], ents=["B-LOC", "I-LOC", "O", "O", ""])
    eg = Example(predicted, reference)
    bio = {t: i for i, t in enumerate(tag_names(["LOC"], "BIO"))}
    assert gold_tag_ids(eg, bio, "BIO").tolist() == [1, 2, 0, 0, MISSING]
    biluo = {t: i for i, t in enumerate(tag_names(["LOC"], "BILUO"))}
    assert gold_tag_ids(eg, biluo, "BILUO").tolist() == [1, 3, 0, 0, MISSING]
    with pytest.raises(ValueError, match="'LOC' is not among"):
        gold_tag_ids(eg, {t: i for i, t in enumerate(tag_names(["PER"], "BIO"))}, "BIO")


@pytest.mark.parametrize("ops", ALL_OPS, ids=lambda o: type(o).__name__)
def test_decoder_device_arrays(ops):
    """Device arrays in, the same paths as the NumPy reference out."""
    tags = tag_names(["A", "B"], "BIO")
    masks = transition_masks(tags, "BIO")
    rng = numpy.random.default_rng(0)
    host = [rng.normal(size=(n, len(tags))).astype("float32") for n in (5, 0, 3)]
    expected = constrained_viterbi(OPS, host, *masks)
    paths = constrained_viterbi(ops, [ops.asarray2f(x) for x in host], *masks)
    assert all(isinstance(p, numpy.ndarray) for p in paths)
    assert [p.tolist() for p in paths] == [p.tolist() for p in expected]

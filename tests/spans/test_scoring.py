"""Scoring documents with a span model: a choice made on the logits' device
comes to the host in one copy per batch, bit for bit, and the one pass over
documents sees their tokens only."""
import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.scoring import Choice, best_entity, choose_spans, score_spans, softmax

from .scripted import NAME, gold_doc, scripted_nlp

LABELS = ("LOC", "PER")
TABLE = {
    "Ann saw Oslo .": {(0, 1): (0.2, 0.1, 0.7), (2, 3): (0.3, 0.6, 0.1)},
    "Nothing here .": {(1, 2): (0.55, 0.4, 0.05)},
    "Bob .": {(0, 1): (0.1, 0.05, 0.85)},
}
GOLD = {"Ann saw Oslo .": [(0, 1, "PER"), (2, 3, "LOC")], "Nothing here .": [], "Bob .": [(0, 1, "PER")]}


def everything(xp, logits):
    """Every column kind: int32, bool, a float32 column and a float32 block."""
    label, confidence, is_argmax = best_entity(xp, logits)
    keep = xp.nonzero(confidence >= numpy.float32(0.3))[0]
    return Choice(keep, {"label": label[keep], "is_argmax": is_argmax[keep], "confidence": confidence[keep], "probs": softmax(xp, logits)[keep]})


def test_a_choice_comes_to_the_host_bit_for_bit():
    ops = NumpyOps()
    candidates = enumerate_candidates(ops, [3, 0, 2], 2)
    logits = numpy.random.default_rng(0).normal(size=(len(candidates), 3)).astype("float32")
    spans = choose_spans(ops, candidates, logits, everything)
    expected = everything(numpy, logits)
    rows = expected.rows
    assert 0 < len(spans) < len(candidates)
    assert spans.starts.tolist() == candidates.starts[rows].tolist() and spans.ends.tolist() == (candidates.ends[rows] + 1).tolist()
    assert spans.doc_ids.tolist() == candidates.doc_ids[rows].tolist()
    for name, column in expected.columns.items():
        assert spans.columns[name].dtype == column.dtype and spans.columns[name].shape == column.shape
        assert spans.columns[name].tobytes() == column.tobytes(), name


def test_by_doc_gives_each_doc_its_rows_at_its_own_positions():
    ops = NumpyOps()
    candidates = enumerate_candidates(ops, [3, 0, 2], 2)
    logits = numpy.zeros((len(candidates), 3), dtype="float32")
    logits[:, 1] = 1.0  # every candidate a LOC
    docs = choose_spans(ops, candidates, logits, everything).by_doc([3, 0, 2])
    assert [list(zip(d.starts.tolist(), d.ends.tolist())) for d in docs] == [[(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)], [], [(0, 1), (0, 2), (1, 2)]]
    assert [d.columns["probs"].shape for d in docs] == [(5, 3), (0, 3), (3, 3)]


def test_an_empty_batch_asks_the_device_nothing(fake_ops):
    candidates = enumerate_candidates(fake_ops, [0, 0], 2)
    with fake_ops.measure() as moved:
        spans = choose_spans(fake_ops, candidates, fake_ops.alloc2f(0, 3), everything)
    assert (moved.copies, moved.syncs) == (0, 0)
    assert len(spans) == 0 and spans.columns["probs"].shape == (0, 3) and spans.columns["is_argmax"].dtype == bool


def test_each_batch_costs_one_copy_and_one_sync(fake_ops):
    nlp = scripted_nlp(TABLE, LABELS)  # its predictions on the fake device
    golds = [gold_doc(nlp, text, ents) for text, ents in GOLD.items()]
    for batch_size, n_batches in ((1, 3), (2, 2), (3, 1)):
        with fake_ops.measure() as moved:
            batches = list(score_spans(nlp, NAME, golds, everything, batch_size=batch_size))
        assert (moved.copies, moved.syncs, moved.loops) == (n_batches, n_batches, 0)
        assert [len(docs) for docs, _ in batches] == [batch_size] * (3 // batch_size) + ([3 % batch_size] if 3 % batch_size else [])
        kept = [(d.starts.tolist(), d.ends.tolist()) for docs, spans in batches for d in spans.by_doc([len(doc) for doc in docs])]
        assert kept == [([0, 2], [1, 3]), ([1], [2]), ([0], [1])]


def test_the_pass_sees_the_tokens_not_the_annotations():
    nlp = scripted_nlp(TABLE, LABELS)
    golds = [gold_doc(nlp, text, ents) for text, ents in GOLD.items()]
    docs = [doc for batch, _ in score_spans(nlp, NAME, golds, everything, batch_size=2) for doc in batch]
    assert [doc.text for doc in docs] == [doc.text for doc in golds]
    assert all(doc is not gold and not doc.ents for doc, gold in zip(docs, golds))
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        next(score_spans(nlp, NAME, golds, everything, batch_size=0))

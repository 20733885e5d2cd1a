"""What a span model's logits say about each candidate: a choice made on the
logits' device comes to the host in one copy, bit for bit (the pass over a
pipeline's documents that makes one per batch: tests/evaluation/test_scoring.py)."""
import numpy
from thinc.api import NumpyOps

from spacy_imbalance.decisions.softmax import softmax
from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.scoring import Choice, best_entity, choose_spans


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

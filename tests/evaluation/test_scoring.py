"""The pass over a trained pipeline's documents that the audit and the
threshold search make: one copy and one sync per batch, and the docs'
tokens only."""
import pytest

from spacy_imbalance.evaluation.scoring import score_spans

from ..spans.scripted import NAME, gold_doc, scripted_nlp
from ..spans.test_scoring import everything

LABELS = ("LOC", "PER")
TABLE = {
    "Ann saw Oslo .": {(0, 1): (0.2, 0.1, 0.7), (2, 3): (0.3, 0.6, 0.1)},
    "Nothing here .": {(1, 2): (0.55, 0.4, 0.05)},
    "Bob .": {(0, 1): (0.1, 0.05, 0.85)},
}
GOLD = {"Ann saw Oslo .": [(0, 1, "PER"), (2, 3, "LOC")], "Nothing here .": [], "Bob .": [(0, 1, "PER")]}


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

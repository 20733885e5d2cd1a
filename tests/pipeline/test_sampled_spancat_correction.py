"""sampled_spancat with uniform_negatives.v2 (the prior correction, a draw
kept per sentence) and max_span_width = null (the width read from the data):
what prediction changes, and that both survive saving, reloading and
multiprocessing."""
import math

import numpy
import pytest
import spacy

from .test_sampled_spancat import make_nlp
from .test_token_ner import TRAIN_DATA, make_examples, pred_ents, train

V2 = {"@misc": "spacy-imbalance.uniform_negatives.v2", "rate": 0.7, "correction": 1.0, "fixed": True}
V1 = {"@misc": "spacy-imbalance.uniform_negatives.v1", "rate": 0.7}


@pytest.fixture(scope="module")
def corrected():
    nlp = make_nlp(V2, max_span_width=None)
    train(nlp, make_examples(nlp))
    return nlp


def test_the_default_sampler_keeps_a_draw_per_sentence_and_does_not_correct():
    # both chosen on WNUT-2017 dev (docs/benchmarks/never_worse.md)
    pipe = make_nlp().get_pipe("sampled_spancat")
    assert type(pipe.negatives).__name__ == "UniformNegativesV2"
    assert pipe.negatives.fixed is True and pipe.negatives.correction == 0.0


def test_width_from_the_data_is_set_logged_and_saved(corrected, tmp_path, caplog):
    pipe = corrected.get_pipe("sampled_spancat")
    # the toy data's widest entity is two tokens (Kate Bush, New York): 2 of 6
    # gold spans, so covering 99 % needs 2
    assert pipe.max_span_width == 2
    assert pipe.model.get_ref("span_repr").get_dim("nV") == 2
    corrected.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("sampled_spancat").max_span_width == 2
    texts = [text for text, _ in TRAIN_DATA]
    assert pred_ents(loaded.pipe(texts)) == pred_ents(corrected.pipe(texts))
    fresh = make_nlp(V2, max_span_width=None)
    with caplog.at_level("INFO", logger="spacy"):
        fresh.initialize(lambda: make_examples(fresh))
    assert "max_span_width = 2 from the training data" in caplog.text


def test_width_is_unknown_before_initialize():
    with pytest.raises(ValueError, match="max_span_width = null"):
        make_nlp(V2, max_span_width=None).get_pipe("sampled_spancat").max_span_width


def test_correction_shifts_o_by_the_log_share(corrected):
    """The corrected logits are the model's with log(c / k) added to O, per
    doc: c candidates, k = ⌈0.7 n⌉ drawn."""
    pipe = corrected.get_pipe("sampled_spancat")
    docs = [corrected.make_doc(text) for text, _ in TRAIN_DATA]
    raw = pipe.model.predict(docs).logits.copy()
    scores = pipe.predict(docs)
    shift = scores.logits[:, 0] - raw[:, 0]
    expected = []
    for doc, count in zip(docs, scores.candidates.doc_counts):
        expected += [math.log(count / math.ceil(0.7 * len(doc) - 1e-9))] * count
    numpy.testing.assert_allclose(shift, expected, rtol=1e-5)
    numpy.testing.assert_array_equal(scores.logits[:, 1:], raw[:, 1:])


def test_correction_predicts_fewer_entities_on_a_barely_trained_model():
    """After a few updates the sampled model calls many spans entities; the
    corrected one calls no more, and fewer where the margin is smaller than
    the shift."""
    texts = [text for text, _ in TRAIN_DATA] * 3
    counts = {}
    for name, negatives in (("v1", V1), ("v2", {**V2, "fixed": False})):
        nlp = make_nlp(negatives)
        train(nlp, make_examples(nlp), n_iter=4)
        counts[name] = sum(len(doc.ents) for doc in nlp.pipe(texts))
        pipe = nlp.get_pipe("sampled_spancat")
        group_sizes = [len(doc.spans["sc"]) for doc in nlp.pipe(texts)]
        # the same weights without the correction predict at least as many spans
        pipe.negatives.correction = 0.0
        assert sum(len(doc.spans["sc"]) for doc in nlp.pipe(texts)) >= sum(group_sizes)
    assert counts["v2"] <= counts["v1"]


def test_fixed_draws_and_correction_in_two_processes_and_after_reload(corrected, tmp_path):
    texts = [text for text, _ in TRAIN_DATA] * 2
    assert pred_ents(corrected.pipe(texts, n_process=2, batch_size=2)) == pred_ents(corrected.pipe(texts))
    loaded = make_nlp(V2, max_span_width=None).from_bytes(corrected.to_bytes())
    assert pred_ents(loaded.pipe(texts)) == pred_ents(corrected.pipe(texts))


def _drawn(pipe, examples):
    """The drawn negatives as (sentence, first token, end) over the batch."""
    candidates, _, chosen = pipe.sample_negatives(examples)
    offsets = numpy.cumsum([0] + [len(eg.predicted) for eg in examples])
    drawn = set()
    for i in chosen.tolist():
        doc = int(candidates.doc_ids[i])
        start = int(candidates.starts[i]) - int(offsets[doc])
        drawn.add((examples[doc].predicted.text, start, start + int(candidates.ends[i] - candidates.starts[i]) + 1))
    return drawn


def test_a_fixed_draw_is_the_same_at_every_update_and_follows_the_seed():
    nlp = make_nlp(V2)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    pipe = nlp.get_pipe("sampled_spancat")
    first = _drawn(pipe, examples)
    assert first and _drawn(pipe, examples) == first
    # the same sentences in another order and batching draw the same spans
    assert _drawn(pipe, examples[::-1]) == first
    assert _drawn(pipe, examples[:2]) | _drawn(pipe, examples[2:]) == first
    # another run's seed draws others
    pipe.cfg["sampling_seed"] += 1
    assert _drawn(pipe, examples) != first


def test_empty_docs_with_the_correction(corrected):
    docs = list(corrected.pipe(["", "Paris", ""]))
    assert [len(doc) for doc in docs] == [0, 1, 0]


def test_overlapping_trains_every_negative_that_overlaps_gold():
    """Through the component: with ``overlapping`` the draw holds each
    two-token entity's sub-spans (Kate / Bush of Kate Bush) at every update,
    and training still fits the toy data."""
    nlp = make_nlp({**V2, "correction": 0.0, "overlapping": True}, max_span_width=3)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    pipe = nlp.get_pipe("sampled_spancat")
    drawn = _drawn(pipe, examples)
    for eg in examples:
        for ent in eg.reference.ents:
            for start in range(ent.start, ent.end):
                for end in range(start + 1, min(ent.end, start + 3) + 1):
                    if (start, end) != (ent.start, ent.end):
                        assert (eg.predicted.text, start, end) in drawn
    # the same kept draw without them is a strict subset
    pipe.negatives.overlapping = False
    assert drawn > _drawn(pipe, examples)
    pipe.negatives.overlapping = True
    losses = train(nlp, examples)
    assert losses[-1] < 0.2 * losses[0]

"""sampled_spancat on every device of the ``device_ops`` fixture
(initialize, two updates, nlp.pipe, decision thresholds) with numpy's
losses and entities, and host round trips per batch that do not grow with
the docs (fake cupy)."""
import pytest
from spacy.language import Language

from spacy_imbalance.evaluation.thresholds.spans import set_span_thresholds

from .test_sampled_spancat import SAMPLERS, make_nlp
from .test_token_ner import TRAIN_DATA, make_examples, pred_ents
from ..device import cycled, device, seeded_initialize, seeded_updates, pipe_counts, update_counts

NAME = "sampled_spancat"
TEXTS = ["Kate likes London .", "Nothing here .", "Paris and New York and Kate Bush ."]


def train_and_predict(sampler: str, n_updates: int = 2):
    nlp = make_nlp(SAMPLERS[sampler], spans_key="sc")
    history = seeded_updates(nlp, make_examples(nlp), NAME, n_updates)
    docs = list(nlp.pipe(TEXTS, batch_size=2))
    return history, pred_ents(docs), [list(doc.spans["sc"].attrs["scores"]) for doc in docs]


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_sampled_spancat_on_device_trains_as_on_numpy(device_ops, sampler):
    with device("numpy"):
        expected = train_and_predict(sampler)
    history, ents, scores = train_and_predict(sampler)
    assert all(value > 0 for value in history)
    if device_ops.name == "cupy":
        return  # cupy initialises the weights and samples from its own random streams
    assert history == pytest.approx(expected[0], rel=1e-5)
    assert ents == expected[1]
    assert [pytest.approx(s, rel=1e-5) for s in scores] == expected[2]


def trained_nlp(sampler: str = "uniform") -> Language:
    nlp = make_nlp(SAMPLERS[sampler], spans_key="sc")
    # one update without dropout: trained weights, not the initial ones
    seeded_updates(nlp, make_examples(nlp), NAME, n_updates=1, drop=0.0)
    return nlp


def prediction_counts(ops, nlp: Language, n_docs: int):
    docs = [nlp.make_doc(text) for text, _ in cycled(TRAIN_DATA, n_docs)]
    return pipe_counts(ops, nlp.get_pipe(NAME), docs)


def test_sampled_spancat_prediction_round_trips_do_not_grow_with_docs(fake_ops):
    nlp = trained_nlp()
    few, many = prediction_counts(fake_ops, nlp, 2), prediction_counts(fake_ops, nlp, 20)
    assert few.round_trips == many.round_trips and many.loops == 0


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_sampled_spancat_update_round_trips_do_not_grow_with_docs(fake_ops, sampler):
    nlp = make_nlp(SAMPLERS[sampler])
    seeded_initialize(nlp, make_examples(nlp))
    few, many = (update_counts(fake_ops, nlp, make_examples(nlp), n) for n in (2, 20))
    assert few.round_trips == many.round_trips and many.loops == 0 and many.float64 == 0


THRESHOLDS = {"LOC": 0.05}


def thresholded_annotations(sampler: str = "uniform"):
    nlp = trained_nlp(sampler)
    before = [[(s.start, s.end, s.label_) for s in doc.spans["sc"]] for doc in nlp.pipe(TEXTS)]
    set_span_thresholds(nlp, NAME, THRESHOLDS)
    docs = list(nlp.pipe(TEXTS, batch_size=2))
    spans = [[(s.start, s.end, s.label_) for s in doc.spans["sc"]] for doc in docs]
    return before, spans, pred_ents(docs), [list(doc.spans["sc"].attrs["scores"]) for doc in docs]


def test_thresholds_on_device_decide_as_on_numpy(device_ops):
    with device("numpy"):
        expected = thresholded_annotations()
    before, spans, ents, scores = thresholded_annotations()
    assert spans != before  # the thresholds change the decision
    # every LOC span passes its threshold (PER keeps the argmax rule)
    assert all(score >= 0.05 for doc_spans, doc_scores in zip(spans, scores) for (_, _, label), score in zip(doc_spans, doc_scores) if label == "LOC")
    if device_ops.name == "cupy":
        return  # cupy initialises the weights from its own random stream
    assert (spans, ents) == expected[1:3]
    assert [pytest.approx(s, rel=1e-5) for s in scores] == expected[3]


def annotation_counts(ops, nlp: Language, n_docs: int):
    """What ``set_annotations`` alone moves for ``n_docs`` docs."""
    pipe = nlp.get_pipe(NAME)
    docs = [nlp.make_doc(text) for text, _ in cycled(TRAIN_DATA, n_docs)]
    scores = pipe.predict(docs)
    with ops.measure() as counts:
        pipe.set_annotations(docs, scores)
    return counts


def test_thresholds_are_uploaded_once_and_cost_one_copy_and_one_sync_per_batch(fake_ops):
    """The per-class threshold vector goes to the device on the first batch
    and is reused after; each batch still leaves the device in one copy
    after one sync, whatever its size."""
    nlp = trained_nlp()
    set_span_thresholds(nlp, NAME, THRESHOLDS)
    first = annotation_counts(fake_ops, nlp, 2)
    few, many = annotation_counts(fake_ops, nlp, 2), annotation_counts(fake_ops, nlp, 20)
    assert (first.copies, first.syncs, first.uploads) == (1, 1, 1)
    assert (few.copies, few.syncs, few.uploads) == (many.copies, many.syncs, many.uploads) == (1, 1, 0)
    assert many.loops == 0 and many.float64 == 0
    # new thresholds: one new upload, then none again
    set_span_thresholds(nlp, NAME, {"LOC": 0.1, "PER": 0.2})
    assert annotation_counts(fake_ops, nlp, 4).uploads == 1
    assert annotation_counts(fake_ops, nlp, 4).uploads == 0
    # the whole prediction does not grow with the docs either
    few, many = prediction_counts(fake_ops, nlp, 2), prediction_counts(fake_ops, nlp, 20)
    assert few.round_trips == many.round_trips and many.loops == 0

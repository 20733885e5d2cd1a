"""token_ner on every device of the ``device_ops`` fixture (initialize, two
updates, nlp.pipe) with numpy's losses and entities, and host round trips
per batch that do not grow with the number of docs (fake cupy)."""
import pytest
import spacy
from spacy.language import Language

from .test_token_ner import LOSSES, TRAIN_DATA, make_examples, pred_ents
from ..device import cycled, device, seeded_initialize, seeded_updates, update_counts

NAME = "token_ner"
TEXTS = ["Kate likes London .", "Nothing here .", "Paris and New York and Kate Bush ."]
DEVICE_LOSSES = ["ce", "wce1", "focal", "dice", "mom", "mom_v2"]


def make_nlp(loss: str, spans_key=None) -> Language:
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"loss": LOSSES[loss], "spans_key": spans_key})
    return nlp


def train_and_predict(loss: str, spans_key=None, n_updates: int = 2):
    """Losses of the updates, then the entities and span scores of TEXTS."""
    nlp = make_nlp(loss, spans_key)
    history = seeded_updates(nlp, make_examples(nlp), NAME, n_updates)
    docs = list(nlp.pipe(TEXTS, batch_size=2))
    scores = [list(doc.spans[spans_key].attrs["scores"]) for doc in docs] if spans_key else None
    return history, pred_ents(docs), scores


@pytest.mark.parametrize("loss", DEVICE_LOSSES)
def test_token_ner_on_device_trains_as_on_numpy(device_ops, loss):
    with device("numpy"):
        expected = train_and_predict(loss, spans_key="sc", n_updates=6)
    history, ents, scores = train_and_predict(loss, spans_key="sc", n_updates=6)
    assert all(value > 0 for value in history)
    if device_ops.name == "cupy":
        return  # cupy initialises the weights from its own random stream
    assert history == pytest.approx(expected[0], rel=1e-5)
    assert ents == expected[1]
    assert [pytest.approx(s, rel=1e-5) for s in scores] == expected[2]


def trained_nlp(spans_key=None) -> Language:
    nlp = make_nlp("ce", spans_key)
    # one update without dropout: trained weights, not the initial ones
    seeded_updates(nlp, make_examples(nlp), NAME, n_updates=1, drop=0.0)
    return nlp


def prediction_counts(ops, nlp: Language, n_docs: int):
    docs = [nlp.make_doc(text) for text, _ in cycled(TRAIN_DATA, n_docs)]
    ner = nlp.get_pipe(NAME)
    with ops.measure() as predict:
        scores = ner.predict(docs)
    with ops.measure() as annotate:
        ner.set_annotations(docs, scores)
    return predict, annotate


@pytest.mark.parametrize("spans_key", [None, "sc"])
def test_token_ner_prediction_round_trips_do_not_grow_with_docs(fake_ops, spans_key):
    """set_annotations copies the decoded paths once (and the log-probs once
    more when it writes span scores), for 2 docs as for 20."""
    nlp = trained_nlp(spans_key)
    few, many = prediction_counts(fake_ops, nlp, 2), prediction_counts(fake_ops, nlp, 20)
    assert [c.round_trips for c in few] == [c.round_trips for c in many]
    assert (many[1].copies, many[1].syncs) == (1 if spans_key is None else 2, 0)


@pytest.mark.parametrize("loss", ["ce", "mom", "mom_v2", "dice"])
def test_token_ner_update_round_trips_do_not_grow_with_docs(fake_ops, loss):
    nlp = make_nlp(loss)
    seeded_initialize(nlp, make_examples(nlp))
    few, many = (update_counts(fake_ops, nlp, make_examples(nlp), n) for n in (2, 20))
    assert few.round_trips == many.round_trips
    # thinc's with_array copies its lengths back twice; the loss value once
    assert many.syncs == 0 and many.copies <= 3

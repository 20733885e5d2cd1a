"""two_task_ner on every device of the ``device_ops`` fixture (initialize,
updates, nlp.pipe) with numpy's losses, AUC state, thresholds and entities,
and host round trips per batch that do not grow with the docs (fake cupy)."""
import numpy
import pytest
from spacy.language import Language

from spacy_imbalance.models.two_task_tagger import get_alpha
from spacy_imbalance.evaluation.thresholds.two_task import component_inputs

from .test_token_ner import TRAIN_DATA, make_examples, pred_ents
from .test_two_task_ner import LOSS_MODES, NAME, NEW_TEXTS, TYPINGS, make_nlp
from ..device import cycled, device, seeded_initialize, seeded_updates, pipe_counts, update_counts


def train_and_predict(loss_mode: str, typing: str, n_updates: int = 4):
    """Losses, AUC state and fitted thresholds after the updates, then the
    entities of NEW_TEXTS."""
    nlp = make_nlp(typing, loss_mode=loss_mode, threshold_holdout=0.0, lambda_=2.0)
    history = seeded_updates(nlp, make_examples(nlp), NAME, n_updates)
    ner = nlp.get_pipe(NAME)
    params = ner.model.get_ref("auc_params")
    ops = ner.model.ops
    state = [ops.to_numpy(x).tolist() for x in (params.get_param("a"), params.get_param("b"), get_alpha(params))]
    return history, state, ner.thresholds, pred_ents(nlp.pipe(NEW_TEXTS, batch_size=2))


@pytest.mark.parametrize("loss_mode", LOSS_MODES)
@pytest.mark.parametrize("typing", TYPINGS)
def test_two_task_ner_on_device_trains_as_on_numpy(device_ops, loss_mode, typing):
    with device("numpy"):
        expected = train_and_predict(loss_mode, typing)
    history, state, thresholds, ents = train_and_predict(loss_mode, typing)
    assert all(numpy.isfinite(history)) and history[0] > 0
    if loss_mode != "bce":  # the AUC phases moved alpha off its start
        assert any(alpha > 0 for alpha in state[2])
    if device_ops.name == "cupy":
        return  # cupy initialises the weights from its own random stream
    assert history == pytest.approx(expected[0], rel=1e-5)
    for got, want in zip(state, expected[1]):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-7)
    assert (thresholds, ents) == expected[2:]


def trained_nlp(typing: str = "type_head", loss_mode: str = "auc") -> Language:
    nlp = make_nlp(typing, loss_mode=loss_mode, threshold_holdout=0.0)
    # one update without dropout: trained weights, not the initial ones
    seeded_updates(nlp, make_examples(nlp), NAME, n_updates=1, drop=0.0)
    return nlp


def texts(n_docs: int):
    return [text for text, _ in cycled(TRAIN_DATA, n_docs)]


def prediction_counts(ops, nlp: Language, n_docs: int):
    return pipe_counts(ops, nlp.get_pipe(NAME), [nlp.make_doc(text) for text in texts(n_docs)])


@pytest.mark.parametrize("typing", TYPINGS)
def test_two_task_ner_prediction_round_trips_do_not_grow_with_docs(fake_ops, typing):
    """The scores cross to the host once per batch, not once per doc
    (before: 3 copies for 2 docs, 21 for 20)."""
    nlp = trained_nlp(typing)
    few, many = prediction_counts(fake_ops, nlp, 2), prediction_counts(fake_ops, nlp, 20)
    assert few.round_trips == many.round_trips
    # one for thinc's with_array (its lengths), one for the scores
    assert (many.copies, many.syncs) == (2, 0)


@pytest.mark.parametrize("loss_mode", LOSS_MODES)
@pytest.mark.parametrize("typing", TYPINGS)
def test_two_task_ner_update_round_trips_do_not_grow_with_docs(fake_ops, loss_mode, typing):
    """Thresholds fitted on every doc: per update the held-out scores cross
    once, the loss once (twice for AUC with the type head), alpha never; no
    float64 on the device."""
    nlp = make_nlp(typing, loss_mode=loss_mode, threshold_holdout=0.0)
    seeded_initialize(nlp, make_examples(nlp))
    # two updates: both phases of the compositional mode (period 1)
    few, many = (update_counts(fake_ops, nlp, make_examples(nlp), n, n_updates=2) for n in (2, 20))
    assert few.round_trips == many.round_trips
    assert many.syncs == 0 and many.float64 == 0
    # per update, thinc's with_array copies its lengths back twice
    assert many.copies <= 2 * (2 + 1 + (2 if loss_mode != "bce" and typing == "type_head" else 1))


@pytest.mark.parametrize("n_docs", [2, 20])
def test_threshold_search_inputs_copy_once_per_batch(fake_ops, n_docs):
    nlp = trained_nlp()
    gold = [nlp.make_doc(text) for text in texts(n_docs)]
    with fake_ops.measure() as counts:
        docs, inputs = component_inputs(nlp, NAME, gold, batch_size=128)
    assert len(inputs) == n_docs and all(type(h) is numpy.ndarray for h, _ in inputs)
    assert (counts.copies, counts.syncs) == (2, 0)

"""token_ner on documents with a label scope (issue 47): the partial-label
loss of an unannotated token (values by hand, finite differences, exact
gradients), today's training where a scope covers every type, losses without
a partial form refused by name, and the device budgets with scopes."""
import math

import numpy
import pytest
import spacy
from numpy.testing import assert_allclose, assert_array_equal
from spacy.language import Language
from spacy.training import Example

from spacy_imbalance.corpus.scopes import set_label_scope
from spacy_imbalance.losses import partial_label_loss
from spacy_imbalance.pipeline.tagging.tags import gold_tag_ids

from ..device import device, seeded_initialize, seeded_updates, update_counts
from .test_token_ner import LOSSES, pred_ents

NAME = "token_ner"
LABELS = ["LOC", "ORG", "PER"]
TAGS = ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
# (text, entities or BILUO tags with "-" = missing, scope or None)
DATA = [
    # annotated for people only: IBM and Paris are unannotated, not "no entity"
    ("Kate visited IBM in Paris .", [(0, 4, "PER")], ["PER"]),
    # complete, with one token missing
    ("Talk to Kate Bush at Google .", ["O", "O", "B-PER", "L-PER", "O", "U-ORG", "-"], None),
    # annotated for places and organisations
    ("New York and Google and Kate .", [(0, 8, "LOC"), (13, 19, "ORG")], ["LOC", "ORG"]),
]
OPEN_TOKEN = (0, 2)  # "IBM": gold O in a doc annotated for PER alone
SCOPED_LOSSES = ["ce", "wce1", "wce2", "focal", "focal_alpha"]
ALL_LOSSES = {**LOSSES, "focal_alpha": {"@losses": "spacy-imbalance.FocalLoss.v1", "gamma": 1.5, "alpha": 0.25}}


def make_nlp(loss: str = "ce", **cfg) -> Language:
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={**cfg, "loss": ALL_LOSSES[loss]})
    return nlp


def make_examples(nlp: Language, scopes=None):
    """DATA's examples, each with its scope (or ``scopes``, one per example)."""
    examples = []
    for i, (text, annotation, scope) in enumerate(DATA):
        eg = Example.from_dict(nlp.make_doc(text), {"entities": annotation})
        scope = scope if scopes is None else scopes[i]
        if scope is not None:
            set_label_scope(eg.reference, scope)
        examples.append(eg)
    return examples


def initialized(loss: str = "ce", scopes=None, **cfg):
    nlp = make_nlp(loss, **cfg)
    examples = make_examples(nlp, scopes)
    seeded_initialize(nlp, examples)
    assert nlp.get_pipe(NAME).tags == TAGS
    return nlp, examples


def random_scores(examples, seed=0, dtype="float64"):
    rng = numpy.random.default_rng(seed)
    return [(2.0 * rng.normal(size=(len(eg.predicted), len(TAGS)))).astype(dtype) for eg in examples]


def allowed_rows(examples, scopes=None):
    """By hand: per token, the tags it may be (gold >= 1: its tag; gold O: O
    and the tags of the types outside its doc's scope; missing: none)."""
    index = {tag: i for i, tag in enumerate(TAGS)}
    rows = []
    for i, eg in enumerate(examples):
        scope = DATA[i][2] if scopes is None else scopes[i]
        outside = [k for k, tag in enumerate(TAGS) if k and scope is not None and tag[2:] not in scope]
        for gold in gold_tag_ids(eg, index, "BIO"):
            allowed = numpy.zeros(len(TAGS), dtype=bool)
            if gold > 0:
                allowed[gold] = True
            elif gold == 0:
                allowed[[0, *outside]] = True
            rows.append((int(gold), allowed))
    return rows


def expected_loss(loss_name, nlp, examples, scores) -> float:
    """The loss from its definition: per trained token, the configured loss
    of the probability of its allowed tags, over the number of trained tokens."""
    settings = ALL_LOSSES[loss_name]
    ner = nlp.get_pipe(NAME)
    logits = numpy.concatenate(scores).astype("float64")
    total, n = 0.0, 0
    for row, (gold, allowed) in zip(logits, allowed_rows(examples)):
        if gold < 0:
            continue
        p = numpy.exp(row - row.max()) / numpy.exp(row - row.max()).sum()
        p_allowed = p[allowed].sum()
        term = -math.log(p_allowed)
        if settings["@losses"].endswith("WeightedCrossEntropy.v1"):
            term *= ner.loss.weights[gold]  # an open row weighs as O (gold 0)
        if settings["@losses"].endswith("FocalLoss.v1"):
            alpha = settings.get("alpha")
            weight = 1.0 if alpha is None else (1 - alpha if gold == 0 else alpha)
            term *= weight * (1 - p_allowed) ** settings["gamma"]
        total += term
        n += 1
    return total / n


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scoped_loss_is_the_configured_loss_of_the_allowed_tags(loss):
    nlp, examples = initialized(loss)
    scores = random_scores(examples)
    value, _ = nlp.get_pipe(NAME).get_loss(examples, scores)
    assert value == pytest.approx(expected_loss(loss, nlp, examples, scores), rel=1e-12)


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scoped_loss_gradient_matches_finite_differences(loss):
    nlp, examples = initialized(loss)
    ner = nlp.get_pipe(NAME)
    scores = random_scores(examples, seed=1)
    _, grads = ner.get_loss(examples, scores)
    eps = 1e-6
    # every token of the scoped doc; in the complete one an entity token, an O token and the missing one
    for doc, token in [(0, t) for t in range(len(examples[0].predicted))] + [(1, 2), (1, 4), (1, 6)]:
        numeric = numpy.zeros(len(TAGS))
        for column in range(len(TAGS)):
            saved = scores[doc][token, column]
            scores[doc][token, column] = saved + eps
            up = ner.get_loss(examples, scores)[0]
            scores[doc][token, column] = saved - eps
            down = ner.get_loss(examples, scores)[0]
            scores[doc][token, column] = saved
            numeric[column] = (up - down) / (2 * eps)
        assert_allclose(grads[doc][token], numeric, rtol=1e-5, atol=1e-9)
    assert not grads[1][6].any()  # the missing token is not trained


def test_an_open_token_is_pulled_towards_o_or_the_types_outside_its_scope():
    """At "IBM" (gold O, doc annotated for PER) the cross-entropy gradient is
    (p_k - [k allowed] p_k / p_A) / N with A = {O, B-LOC, I-LOC, B-ORG, I-ORG}:
    negative on every allowed tag (their logits go up, ORG's included), p_k / N
    on B-PER and I-PER as before. Without the scope B-ORG's is p_k / N > 0."""
    nlp, examples = initialized("ce")
    ner = nlp.get_pipe(NAME)
    scores = random_scores(examples, seed=2)
    n_trained = sum(gold >= 0 for gold, _ in allowed_rows(examples))
    doc, token = OPEN_TOKEN
    logits = scores[doc][token]
    p = numpy.exp(logits - logits.max()) / numpy.exp(logits - logits.max()).sum()
    allowed = numpy.asarray([True, True, True, True, True, False, False])
    p_allowed = p[allowed].sum()
    _, grads = ner.get_loss(examples, scores)
    assert_allclose(grads[doc][token], (p - allowed * p / p_allowed) / n_trained, rtol=1e-12, atol=1e-16)
    assert (grads[doc][token][allowed] < 0).all() and (grads[doc][token][~allowed] > 0).all()
    unscoped = make_examples(nlp, scopes=[None, None, None])
    _, plain = ner.get_loss(unscoped, scores)
    b_org = TAGS.index("B-ORG")
    assert plain[doc][token][b_org] == pytest.approx(p[b_org] / n_trained, rel=1e-12) and p[b_org] > 0
    # an annotated token of the same doc is trained as before: "Kate" is B-PER alone
    assert_array_equal(grads[doc][0], plain[doc][0])


def test_scoped_cross_entropy_is_the_partial_label_loss_of_every_row():
    nlp, examples = initialized("ce")
    scores = random_scores(examples, seed=3, dtype="float32")
    value, grads = nlp.get_pipe(NAME).get_loss(examples, scores)
    allowed = numpy.stack([row for _, row in allowed_rows(examples)])
    expected_value, expected_grad = partial_label_loss(numpy.concatenate(scores), allowed)
    assert_array_equal(numpy.concatenate(grads), expected_grad)
    assert value == pytest.approx(expected_value, rel=1e-6)


@pytest.mark.parametrize("loss", sorted(ALL_LOSSES))
def test_a_scope_of_every_type_is_today_s_loss_and_gradient(loss):
    nlp, _ = initialized(loss, scopes=[None, None, None])
    ner = nlp.get_pipe(NAME)
    plain = make_examples(nlp, scopes=[None, None, None])
    full = make_examples(nlp, scopes=[LABELS, None, LABELS])
    scores = random_scores(plain, seed=4, dtype="float32")
    value, grads = ner.get_loss(full, scores)
    expected_value, expected_grads = ner.get_loss(plain, scores)
    assert value == expected_value
    for grad, expected in zip(grads, expected_grads):
        assert_array_equal(grad, expected)


@pytest.mark.parametrize("loss", ["ce", "mom"])
def test_a_scope_of_every_type_trains_and_predicts_as_today(loss):
    texts = [text for text, _, _ in DATA] + ["Kate and IBM in Paris ."]

    def run(scopes):
        nlp = make_nlp(loss)
        history = seeded_updates(nlp, make_examples(nlp, scopes), NAME, n_updates=4)
        return history, pred_ents(nlp.pipe(texts))

    assert run([LABELS, LABELS, LABELS]) == run([None, None, None])


@pytest.mark.parametrize("loss", ["ce", "wce2", "focal_alpha"])
def test_scope_o_weight_mixes_the_partial_label_with_o(loss):
    """scope_o_weight w trains an open token (1 - w) by its partial label and
    w as O: w = 1 is the naive merge, and the loss is linear in w."""
    values = {}
    for weight in (0.0, 0.5, 1.0):
        nlp, examples = initialized(loss, scope_o_weight=weight)
        scores = random_scores(examples, seed=5)
        values[weight] = nlp.get_pipe(NAME).get_loss(examples, scores)
    naive_value, naive_grad = nlp.get_pipe(NAME).get_loss(make_examples(nlp, scopes=[None, None, None]), scores)
    assert values[1.0][0] == pytest.approx(naive_value, rel=1e-12)
    for got, naive in zip(values[1.0][1], naive_grad):
        assert_allclose(got, naive, rtol=1e-12, atol=1e-15)
    assert values[0.5][0] == pytest.approx((values[0.0][0] + values[1.0][0]) / 2, rel=1e-12)
    assert values[0.0][0] < values[1.0][0]


def test_scope_o_weight_outside_0_1_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"token_ner 'token_ner': scope_o_weight must be in \[0, 1\].*got 2"):
        make_nlp("ce", scope_o_weight=2)


def test_labels_from_the_data_include_a_scope_s_types_without_entities():
    nlp = make_nlp()
    examples = make_examples(nlp, scopes=[["PER", "MISC"], None, ["LOC", "ORG"]])
    nlp.initialize(get_examples=lambda: examples)
    assert nlp.get_pipe(NAME).labels == ("LOC", "MISC", "ORG", "PER")


def test_a_scope_naming_a_label_the_component_lacks_is_refused_at_initialize():
    nlp = make_nlp()
    nlp.config["initialize"]["components"][NAME] = {"labels": LABELS}
    examples = make_examples(nlp, scopes=[["PER", "MISC"], None, None])
    with pytest.raises(ValueError) as err:
        nlp.initialize(get_examples=lambda: examples)
    assert str(err.value).startswith(
        "token_ner 'token_ner': the training data's label scope ['MISC', 'PER'] names labels the model does not have: 'MISC'"
    )


REFUSED = {"dice": "DiceLoss", "mom": "MoMLoss", "mom_v2": "MoMLossV2"}


def refusal(loss_class: str) -> str:
    return (
        "token_ner 'token_ner': the training data has label scopes (documents that annotate only some entity types), "
        f"and the loss {loss_class} has no partial-label form"
    )


@pytest.mark.parametrize("loss", sorted(REFUSED))
def test_a_loss_without_partial_form_is_refused_naming_it(loss):
    nlp = make_nlp(loss)
    examples = make_examples(nlp)
    with pytest.raises(ValueError) as at_initialize:
        nlp.initialize(get_examples=lambda: examples)
    assert str(at_initialize.value).startswith(refusal(REFUSED[loss]))
    # scopes that appear only in training batches are refused there
    nlp = make_nlp(loss)
    optimizer = nlp.initialize(get_examples=lambda: make_examples(nlp, scopes=[None, None, None]))
    with pytest.raises(ValueError) as at_update:
        nlp.update(examples, sgd=optimizer)
    assert str(at_update.value).startswith(refusal(REFUSED[loss]))


def test_a_scope_outside_the_labels_in_a_batch_names_the_example():
    nlp, _ = initialized("ce")
    examples = make_examples(nlp, scopes=[None, None, ["LOC", "MISC"]])
    with pytest.raises(ValueError, match=r"^token_ner 'token_ner': example 2 of the batch: label scope \['LOC', 'MISC'\] names labels"):
        nlp.update(examples)


@pytest.mark.parametrize("loss", ["ce", "focal_alpha"])
def test_scoped_training_on_device_is_numpy_s(device_ops, loss):
    def run():
        nlp = make_nlp(loss)
        return seeded_updates(nlp, make_examples(nlp), NAME, n_updates=3)

    with device("numpy"):
        expected = run()
    history = run()
    if device_ops.name == "cupy":
        assert all(numpy.isfinite(history))
        return  # cupy initialises the weights from its own random stream
    assert history == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("loss", ["ce", "wce1", "focal_alpha"])
def test_scoped_update_round_trips_do_not_grow_with_docs(fake_ops, loss):
    nlp = make_nlp(loss)
    scoped, plain = make_examples(nlp), make_examples(nlp, scopes=[None, None, None])
    seeded_initialize(nlp, scoped)
    few, many = (update_counts(fake_ops, nlp, scoped, n) for n in (3, 30))
    assert few.round_trips == many.round_trips
    # as without scopes: thinc's with_array copies its lengths back twice; the loss value once
    assert many.syncs == 0 and many.copies <= 3
    # the scopes cost one upload per batch, the mask of the tokens that allow several tags
    for n, counts in ((3, few), (30, many)):
        assert counts.uploads - update_counts(fake_ops, nlp, plain, n).uploads == 1

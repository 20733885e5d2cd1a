"""token_ner on documents with a label scope (issue 47): the partial-label
loss of an unannotated token (values by hand, finite differences, exact
gradients), today's training where a scope covers every type, the errors of
its own, and the device budgets with scopes (the refusals and the device
comparison it shares with sampled_spancat are in test_scoped_components)."""
from functools import partial

import numpy
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spacy_imbalance.losses import partial_label_loss
from spacy_imbalance.pipeline.tagging.tags import gold_tag_ids

from ..device import seeded_updates
from ..losses._gradients import numeric_gradient
from ._scoped import ALL_LOSSES, SCOPED_LOSSES, UNSCOPED, ScopedComponent, expected_loss
from .test_token_ner import pred_ents

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
COMPONENT = ScopedComponent(NAME, DATA, LABELS, "tags", TAGS)
make_nlp, make_examples, initialized = COMPONENT.make_nlp, COMPONENT.make_examples, COMPONENT.initialized


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


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scoped_loss_is_the_configured_loss_of_the_allowed_tags(loss):
    """Per trained token, the configured loss of the probability of its
    allowed tags, over the number of trained tokens."""
    nlp, examples = initialized(loss)
    ner = nlp.get_pipe(NAME)
    scores = random_scores(examples)
    value, _ = ner.get_loss(examples, scores)
    expected = expected_loss(ALL_LOSSES[loss], ner.loss, numpy.concatenate(scores), allowed_rows(examples))
    assert value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scoped_loss_gradient_matches_finite_differences(loss):
    nlp, examples = initialized(loss)
    ner = nlp.get_pipe(NAME)
    scores = random_scores(examples, seed=1)
    _, grads = ner.get_loss(examples, scores)

    def loss_with(doc, x):
        """The loss with the scores of ``doc`` replaced by ``x``."""
        return ner.get_loss(examples, [x if i == doc else s for i, s in enumerate(scores)])[0]

    numeric = {doc: numeric_gradient(partial(loss_with, doc), scores[doc]) for doc in (0, 1)}
    # every token of the scoped doc; in the complete one an entity token, an O token and the missing one
    for doc, token in [(0, t) for t in range(len(examples[0].predicted))] + [(1, 2), (1, 4), (1, 6)]:
        assert_allclose(grads[doc][token], numeric[doc][token], rtol=1e-5, atol=1e-9)
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
    unscoped = make_examples(nlp, scopes=UNSCOPED)
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
    nlp, plain = initialized(loss, scopes=UNSCOPED)
    ner = nlp.get_pipe(NAME)
    scores = random_scores(plain, seed=4, dtype="float32")
    value, grads = ner.get_loss(make_examples(nlp, scopes=[LABELS, None, LABELS]), scores)
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

    assert run([LABELS, LABELS, LABELS]) == run(UNSCOPED)


@pytest.mark.parametrize("loss", ["ce", "wce2", "focal_alpha"])
def test_scope_o_weight_mixes_the_partial_label_with_o(loss):
    """scope_o_weight w trains an open token (1 - w) by its partial label and
    w as O: w = 1 is the naive merge, and the loss is linear in w."""
    values = {}
    for weight in (0.0, 0.5, 1.0):
        nlp, examples = initialized(loss, scope_o_weight=weight)
        scores = random_scores(examples, seed=5)
        values[weight] = nlp.get_pipe(NAME).get_loss(examples, scores)
    naive_value, naive_grad = nlp.get_pipe(NAME).get_loss(make_examples(nlp, scopes=UNSCOPED), scores)
    assert values[1.0][0] == pytest.approx(naive_value, rel=1e-12)
    for got, naive in zip(values[1.0][1], naive_grad):
        assert_allclose(got, naive, rtol=1e-12, atol=1e-15)
    assert values[0.5][0] == pytest.approx((values[0.0][0] + values[1.0][0]) / 2, rel=1e-12)
    assert values[0.0][0] < values[1.0][0]


def test_scope_o_weight_outside_0_1_is_refused_naming_it():
    with pytest.raises(ValueError, match=rf"{COMPONENT.owner}: scope_o_weight must be in \[0, 1\].*got 2"):
        make_nlp("ce", scope_o_weight=2)


def test_labels_from_the_data_include_a_scope_s_types_without_entities():
    nlp = make_nlp()
    examples = make_examples(nlp, scopes=[["PER", "MISC"], None, ["LOC", "ORG"]])
    nlp.initialize(get_examples=lambda: examples)
    assert nlp.get_pipe(NAME).labels == ("LOC", "MISC", "ORG", "PER")


@pytest.mark.parametrize("loss", ["ce", "wce1", "focal_alpha"])
def test_scoped_update_round_trips_do_not_grow_with_docs(fake_ops, loss):
    (few, many), plain = COMPONENT.update_counts(fake_ops, loss, sizes=(3, 30))
    assert few.round_trips == many.round_trips
    # as without scopes: thinc's with_array copies its lengths back twice; the loss value once
    assert many.syncs == 0 and many.copies <= 3
    # the scopes cost one upload per batch, the mask of the tokens that allow several tags
    for counts, without in zip((few, many), plain):
        assert counts.uploads - without.uploads == 1

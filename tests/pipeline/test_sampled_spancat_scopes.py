"""sampled_spancat on documents with a label scope (issue 47): the partial-label
loss of a candidate not annotated as an entity (values by hand, finite
differences, exact gradients elsewhere), today's training where no scope
leaves a type out, the sampler's draws unchanged, two differently scoped
corpora trained together, the clear errors, serialisation, multiprocessing,
empty docs and the device budgets (the errors and the device comparison it
shares with token_ner are in test_scoped_components)."""
import math

import numpy
import pytest
import spacy
from numpy.testing import assert_allclose, assert_array_equal
from spacy.language import Language
from spacy.training import Example
from spacy.util import load_config, registry

from spacy_imbalance.corpus.scopes import set_label_scope
from spacy_imbalance.losses import partial_label_loss
from spacy_imbalance.models.span_scorer import SpanScores
from spacy_imbalance.spans.candidates import enumerate_candidates

from ..device import seeded_initialize, seeded_updates
from ..init_config.test_scoped import _invoke
from ..losses._gradients import numeric_gradient
from ._scoped import ALL_LOSSES, SCOPED_LOSSES, UNSCOPED, ScopedComponent, expected_loss
from ._scoped import train_with_spacy, write_corpora, write_corpus
from .test_token_ner import pred_ents

NAME = "sampled_spancat"
LABELS = ["LOC", "PER"]
CLASSES = ["O", "LOC", "PER"]
# (text, entities or BILUO tags with "-" = missing, scope or None, rejected spans as token ranges)
DATA = [
    # annotated for people only: Paris is unannotated, not "no entity"
    ("Kate visited Paris .", [(0, 4, "PER")], ["PER"], []),
    # complete, with the last token's annotation missing
    ("Talk to Kate Bush at noon .", ["O", "O", "B-PER", "L-PER", "O", "O", "-"], None, []),
    # annotated for places only, and a reviewer rejected "Kate" (a known negative: O, whatever the scope)
    ("London and Paris and Kate .", [(0, 6, "LOC"), (11, 16, "LOC")], ["LOC"], [(4, 5)]),
]
WIDTH = 2
COMPONENT = ScopedComponent(NAME, DATA, LABELS, "classes", CLASSES, {"max_span_width": WIDTH})
make_nlp, make_examples, initialized = COMPONENT.make_nlp, COMPONENT.make_examples, COMPONENT.initialized


def random_scores(nlp, examples, seed=0, dtype="float64") -> SpanScores:
    """Every candidate of ``examples`` with random logits (get_loss's input)."""
    pipe = nlp.get_pipe(NAME)
    candidates = enumerate_candidates(pipe.model.ops, [len(eg.predicted) for eg in examples], pipe.max_span_width)
    rng = numpy.random.default_rng(seed)
    return SpanScores(candidates, (2.0 * rng.normal(size=(len(candidates), len(CLASSES)))).astype(dtype))


def candidate_rows(examples, scopes=None):
    """By hand, per candidate (doc, start, width order): its doc, its span,
    its gold class (-1 touching a missing token) and the classes it may be
    (gold entity: its class; not an entity: O and the types outside its
    doc's scope, O alone when rejected; missing: none)."""
    rows = []
    for i, eg in enumerate(examples):
        scope = DATA[i][2] if scopes is None else scopes[i]
        outside = [k for k, label in enumerate(CLASSES) if k and scope is not None and label not in scope]
        gold = {(e.start, e.end): CLASSES.index(e.label_) for e in eg.reference.ents}
        missing = {t.i for t in eg.reference if t.ent_iob == 0}
        rejected = set(DATA[i][3])
        for start in range(len(eg.predicted)):
            for width in range(1, WIDTH + 1):
                end = start + width
                if end > len(eg.predicted):
                    continue
                allowed = numpy.zeros(len(CLASSES), dtype=bool)
                if (start, end) in gold:
                    cls = gold[(start, end)]
                    allowed[cls] = True
                elif missing & set(range(start, end)):
                    cls = -1
                else:
                    cls = 0
                    allowed[[0] if (start, end) in rejected else [0, *outside]] = True
                rows.append((i, (start, end), cls, allowed))
    return rows


# -- the loss --------------------------------------------------------------------


def test_partial_loss_by_hand_on_one_sentence():
    """"Kate visited Paris", annotated for PER, one-token candidates:
    p(Kate) = (1/4, 1/4, 1/2), gold PER: -log 1/2;
    p(visited) = (3/5, 1/5, 1/5), O or LOC: -log 4/5;
    p(Paris) = (1/4, 1/2, 1/4), O or LOC: -log 3/4; the mean of the three.
    The gradient is p - [k allowed] p / p_A, over 3."""
    nlp = make_nlp(max_span_width=1)
    nlp.config["initialize"]["components"][NAME] = {"labels": LABELS}
    eg = Example.from_dict(nlp.make_doc("Kate visited Paris"), {"entities": [(0, 4, "PER")]})
    set_label_scope(eg.reference, ["PER"])
    seeded_initialize(nlp, [eg])
    pipe = nlp.get_pipe(NAME)
    pipe.loss.normalize = True  # the mean over the trained rows, as the values above (the default sums)
    candidates = enumerate_candidates(pipe.model.ops, [3], 1)
    logits = numpy.log(numpy.asarray([[1.0, 1.0, 2.0], [3.0, 1.0, 1.0], [1.0, 2.0, 1.0]]))
    loss, grad = pipe.get_loss([eg], SpanScores(candidates, logits))
    assert loss == pytest.approx((math.log(2) + math.log(5 / 4) + math.log(4 / 3)) / 3, rel=1e-12)
    expected = numpy.asarray(
        [[1 / 4, 1 / 4, 1 / 2 - 1], [3 / 5 - 3 / 4, 1 / 5 - 1 / 4, 1 / 5], [1 / 4 - 1 / 3, 1 / 2 - 2 / 3, 1 / 4]]
    ) / 3
    assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)
    # without the scope, "visited" and "Paris" are O alone: -log 3/5 and -log 1/4
    unscoped = Example.from_dict(nlp.make_doc("Kate visited Paris"), {"entities": [(0, 4, "PER")]})
    plain, _ = pipe.get_loss([unscoped], SpanScores(candidates, logits))
    assert plain == pytest.approx((math.log(2) + math.log(5 / 3) + math.log(4)) / 3, rel=1e-12)


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scoped_loss_is_the_configured_loss_of_the_allowed_classes(loss):
    """Per trained candidate, the configured loss of the probability of its
    allowed classes, over their number."""
    nlp, examples = initialized(loss)
    pipe = nlp.get_pipe(NAME)
    scores = random_scores(nlp, examples)
    value, _ = pipe.get_loss(examples, scores)
    rows = [(gold, allowed) for _, _, gold, allowed in candidate_rows(examples)]
    assert value == pytest.approx(expected_loss(ALL_LOSSES[loss], pipe.loss, scores.logits, rows), rel=1e-12)


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scoped_loss_gradient_matches_finite_differences(loss):
    nlp, examples = initialized(loss)
    pipe = nlp.get_pipe(NAME)
    scores = random_scores(nlp, examples, seed=1)
    _, grad = pipe.get_loss(examples, scores)
    assert_allclose(grad, numeric_gradient(lambda x: pipe.get_loss(examples, SpanScores(scores.candidates, x))[0], scores.logits), rtol=1e-5, atol=1e-9)
    missing = [r for r, (_, _, gold, _) in enumerate(candidate_rows(examples)) if gold < 0]
    assert missing and not grad[missing].any()  # candidates touching a missing token are not trained


def test_scoped_cross_entropy_is_the_partial_label_loss_of_every_row():
    nlp, examples = initialized("ce")
    nlp.get_pipe(NAME).loss.normalize = True  # partial_label_loss's mean (the default sums)
    scores = random_scores(nlp, examples, seed=3, dtype="float32")
    value, grad = nlp.get_pipe(NAME).get_loss(examples, scores)
    allowed = numpy.stack([allowed for _, _, _, allowed in candidate_rows(examples)])
    expected_value, expected_grad = partial_label_loss(scores.logits, allowed)
    assert_array_equal(grad, expected_grad)
    assert value == pytest.approx(expected_value, rel=1e-6)


def open_rows(examples):
    """The candidates of the scoped docs that are no gold entity and not rejected."""
    return [r for r, (doc, _, gold, allowed) in enumerate(candidate_rows(examples)) if gold == 0 and allowed.sum() > 1]


def test_out_of_scope_types_are_never_pushed_down():
    """On a candidate of the PER-only doc that is no entity, the cross-entropy
    gradient of LOC is (p_LOC - p_LOC / p_A) / N <= 0: LOC rises with O, where
    without the scope it is p_LOC / N > 0 (pushed down). The loss cannot tell O
    from LOC there: swapping their scores leaves it unchanged. Every other row
    (gold, rejected, the unscoped doc's) has today's gradient, exactly."""
    nlp, examples = initialized("ce")
    pipe = nlp.get_pipe(NAME)
    pipe.loss.normalize = True  # the gradients over N below (the default sums)
    scores = random_scores(nlp, examples, seed=2)
    rows = candidate_rows(examples)
    n_trained = sum(gold >= 0 for _, _, gold, _ in rows)
    _, grad = pipe.get_loss(examples, scores)
    _, plain = pipe.get_loss(make_examples(nlp, scopes=UNSCOPED), scores)
    opened = open_rows(examples)
    assert {rows[r][0] for r in opened} == {0, 2}
    p = numpy.exp(scores.logits) / numpy.exp(scores.logits).sum(axis=1, keepdims=True)
    for r in opened:
        allowed = rows[r][3]
        outside = [k for k in (1, 2) if allowed[k]]
        assert outside == [1 if rows[r][0] == 0 else 2]  # LOC in the PER doc, PER in the LOC doc
        assert_allclose(grad[r], (p[r] - allowed * p[r] / p[r][allowed].sum()) / n_trained, rtol=1e-10, atol=1e-15)
        assert (grad[r][outside] < 0).all() and (plain[r][outside] > 0).all()
    others = sorted(set(range(len(rows))) - set(opened))
    assert_array_equal(grad[others], plain[others])
    rejected = [r for r, (doc, span, _, _) in enumerate(rows) if doc == 2 and span == (4, 5)]
    assert rejected and (grad[rejected[0]][2] > 0)  # "Kate", rejected in the LOC doc: PER goes down
    # swap O and the out-of-scope type of every open row: the loss stays
    swapped = scores.logits.copy()
    for r in opened:
        k = 1 if rows[r][0] == 0 else 2
        swapped[r, [0, k]] = swapped[r, [k, 0]]
    before = pipe.get_loss(examples, scores)[0]
    after = pipe.get_loss(examples, SpanScores(scores.candidates, swapped))[0]
    assert after == pytest.approx(before, rel=1e-12)


# MoMLoss.v2 averages per sentence: sampled_spancat refuses it whatever the scopes
@pytest.mark.parametrize("loss", sorted(set(ALL_LOSSES) - {"mom_v2"}))
def test_a_scope_of_every_type_is_today_s_loss_and_gradient(loss):
    nlp, plain = initialized(loss, scopes=UNSCOPED)
    pipe = nlp.get_pipe(NAME)
    scores = random_scores(nlp, plain, seed=4, dtype="float32")
    value, grad = pipe.get_loss(make_examples(nlp, scopes=[LABELS, None, LABELS]), scores)
    expected_value, expected_grad = pipe.get_loss(plain, scores)
    assert value == expected_value
    assert_array_equal(grad, expected_grad)


@pytest.mark.parametrize("loss", SCOPED_LOSSES)
def test_scope_o_weight_mixes_the_partial_label_with_o(loss):
    """scope_o_weight w trains an open candidate (1 - w) by its partial label
    and w as O: w = 1 is the naive merge (the docs without their scopes),
    and the loss is linear in w between the two."""
    scopes = [sorted(scope) if scope else None for _, _, scope, _ in DATA]
    values = {}
    for weight in (0.0, 0.3, 1.0):
        nlp, _ = initialized(loss, scope_o_weight=weight)
        pipe = nlp.get_pipe(NAME)
        assert pipe.cfg["scope_o_weight"] == weight
        scoped = make_examples(nlp, scopes)
        scores = random_scores(nlp, scoped, seed=6)
        values[weight] = pipe.get_loss(scoped, scores)
    naive = make_examples(nlp, scopes=UNSCOPED)
    naive_value, naive_grad = pipe.get_loss(naive, scores)
    assert values[1.0][0] == pytest.approx(naive_value, rel=1e-12)
    assert_allclose(values[1.0][1], naive_grad, rtol=1e-12, atol=1e-15)
    assert values[0.3][0] == pytest.approx(0.7 * values[0.0][0] + 0.3 * values[1.0][0], rel=1e-12)
    assert_allclose(values[0.3][1], 0.7 * values[0.0][1] + 0.3 * values[1.0][1], rtol=1e-12, atol=1e-15)
    assert values[0.0][0] < values[0.3][0] < values[1.0][0]  # an out-of-scope type is allowed, then not


def test_scope_o_weight_gradient_matches_finite_differences():
    nlp, examples = initialized("focal_alpha", scope_o_weight=0.4)
    pipe = nlp.get_pipe(NAME)
    scores = random_scores(nlp, examples, seed=7)
    _, grad = pipe.get_loss(examples, scores)
    assert_allclose(grad, numeric_gradient(lambda x: pipe.get_loss(examples, SpanScores(scores.candidates, x))[0], scores.logits), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_scope_o_weight_outside_0_1_is_refused_naming_it(weight):
    with pytest.raises(ValueError, match=rf"sampled_spancat 'sampled_spancat': scope_o_weight must be in \[0, 1\].*got {weight}"):
        make_nlp("ce", scope_o_weight=weight)


def test_scope_o_weight_is_saved_with_the_pipeline(tmp_path):
    nlp, _ = initialized("ce", scope_o_weight=0.25)
    nlp.to_disk(tmp_path / "p")
    assert spacy.load(tmp_path / "p").get_pipe(NAME).cfg["scope_o_weight"] == 0.25


@pytest.mark.parametrize("loss", ["ce", "mom"])
def test_a_scope_of_every_type_trains_and_predicts_as_today(loss):
    texts = [text for text, _, _, _ in DATA] + ["Kate and London ."]

    def run(scopes):
        nlp = make_nlp(loss, spans_key="sc")
        history = seeded_updates(nlp, make_examples(nlp, scopes), NAME, n_updates=4)
        docs = list(nlp.pipe(texts))
        return history, pred_ents(docs), [list(doc.spans["sc"].attrs["scores"]) for doc in docs]

    assert run([LABELS, LABELS, LABELS]) == run(UNSCOPED)


def test_the_sampler_draws_the_same_negatives_with_scopes():
    nlp, examples = initialized("ce")
    pipe = nlp.get_pipe(NAME)
    drawn = []
    for batch in (examples, make_examples(nlp, scopes=UNSCOPED)):
        pipe.reseed(7)
        candidates, targets, negatives = pipe.sample_negatives(batch)
        drawn.append((targets.classes.tolist(), negatives.tolist()))
        assert (targets.out_of_scope is None) == (batch is not examples)
    assert drawn[0] == drawn[1] and drawn[0][1]


# -- the errors ------------------------------------------------------------------


def test_labels_from_the_data_include_a_scope_s_types_without_entities():
    nlp = make_nlp()
    examples = make_examples(nlp, scopes=[["PER", "MISC"], None, ["LOC"]])
    nlp.initialize(get_examples=lambda: examples)
    assert nlp.get_pipe(NAME).labels == ("LOC", "MISC", "PER")


def test_a_gold_span_outside_its_scope_names_the_example_and_the_span():
    nlp, _ = initialized("ce")
    examples = make_examples(nlp, scopes=[["LOC"], None, None])
    with pytest.raises(ValueError) as err:
        nlp.update(examples)
    assert str(err.value) == (
        f"{COMPONENT.owner}: example 0 of the batch: the entity 'Kate' (tokens 0-1, in doc.ents) has the label 'PER', "
        "outside the label scope ['LOC']; add the label to the scope or remove the entity"
    )


# -- corpora annotated for different types ------------------------------------------

PEOPLE = [
    ("Kate lives in London .", [(0, 4, "PER")]),
    ("Tim works in London .", [(0, 3, "PER")]),
    ("Ann met Tim in Paris .", [(0, 3, "PER"), (8, 11, "PER")]),
]
PLACES = [
    ("London is big .", [(0, 6, "LOC")]),
    ("Kate left Paris for London .", [(10, 15, "LOC"), (20, 26, "LOC")]),
    ("Tim likes Paris .", [(10, 15, "LOC")]),
]
# annotated for every type: without it nothing says that a word is no entity
# (each candidate of the other two may be O or the other corpus's type)
COMPLETE = [("Ann flew to Paris .", [(0, 3, "PER"), (12, 17, "LOC")]), ("It is big in here .", [])]
# the unannotated entities of the one-type corpora: (text, start, label)
UNANNOTATED = [("Kate lives in London .", 3, "LOC"), ("Tim works in London .", 3, "LOC"), ("Kate left Paris for London .", 0, "PER")]


def combined_corpus(tmp, nlp, scoped: bool):
    """The three corpora as one CombinedCorpus.v1, the one-type ones read
    by ScopedCorpus.v1 (``scoped``) or naively merged (spacy.Corpus.v1)."""
    corpora = {}
    for name, data, labels in (("people", PEOPLE, ["PER"]), ("places", PLACES, ["LOC"]), ("complete", COMPLETE, None)):
        write_corpus(tmp / f"{name}.spacy", nlp, data)
        reader = {"@readers": "spacy.Corpus.v1", "path": str(tmp / f"{name}.spacy"), "gold_preproc": False}
        if scoped and labels is not None:
            reader = {"@readers": "spacy-imbalance.ScopedCorpus.v1", "path": str(tmp / f"{name}.spacy"), "labels": labels}
        corpora[name] = reader
    return registry.resolve({"train": {"@readers": "spacy-imbalance.CombinedCorpus.v1", "corpora": corpora}})["train"]


def probability(nlp: Language, text: str, start: int, label: str) -> float:
    """The model's probability that the one-token span at ``start`` of ``text`` is ``label``."""
    pipe = nlp.get_pipe(NAME)
    scores = pipe.predict([nlp.make_doc(text)])
    row = int(scores.candidates.index(numpy.asarray([start], dtype="int32"), numpy.asarray([1], dtype="int32"))[0])
    logits = numpy.asarray(scores.logits[row], dtype="float64")
    p = numpy.exp(logits - logits.max())
    return float(p[pipe.classes.index(label)] / p.sum())


def train_on_corpora(tmp, scoped: bool):
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"negatives": {"@misc": "spacy-imbalance.all_negatives.v1"}, "max_span_width": 2})
    examples = list(combined_corpus(tmp, nlp, scoped)(nlp))
    assert len(examples) == 8
    return nlp, seeded_updates(nlp, examples, NAME, n_updates=60, drop=0.0)


@pytest.fixture(scope="module")
def scoped_and_naive(tmp_path_factory):
    """sampled_spancat trained on a PER-only, a LOC-only and a complete
    corpus (every negative drawn), with scopes and as a naive merge."""
    return [train_on_corpora(tmp_path_factory.mktemp(kind), kind == "scoped") for kind in ("scoped", "naive")]


def test_corpora_of_different_types_train_one_model_of_both_types(scoped_and_naive):
    (nlp, history), _ = scoped_and_naive
    assert nlp.get_pipe(NAME).labels == ("LOC", "PER")
    assert history[-1] < 0.01 * history[0]
    texts = [text for text, _ in PEOPLE + PLACES + COMPLETE]
    # each document's own annotation, no more: O is learned where the complete corpus says it
    assert pred_ents(nlp.pipe(texts)) == [sorted(ents) for _, ents in PEOPLE + PLACES + COMPLETE]


def test_an_unannotated_entity_of_a_type_out_of_scope_is_not_taught_as_no_entity(scoped_and_naive):
    """The naive merge trains London in the PER-only corpus as no entity
    and drives its LOC probability to ~0; with scopes nothing pushes it
    down, and it stays at least ten times higher (likewise Kate's PER in
    the LOC-only corpus)."""
    (scoped, _), (naive, _) = scoped_and_naive
    for text, start, label in UNANNOTATED:
        p_scoped, p_naive = probability(scoped, text, start, label), probability(naive, text, start, label)
        assert p_naive < 1e-3 and p_scoped > 10 * p_naive, (text, label, p_scoped, p_naive)


def test_a_scoped_model_round_trips_and_runs_in_two_processes(scoped_and_naive, tmp_path):
    (nlp, _), _ = scoped_and_naive
    texts = [text for text, _ in PEOPLE + PLACES + COMPLETE] + ["", "Kate"]
    expected = pred_ents(nlp.pipe(texts))
    nlp.to_disk(tmp_path / "model")
    for loaded in (spacy.load(tmp_path / "model"), type(nlp).from_config(nlp.config).from_bytes(nlp.to_bytes())):
        assert loaded.get_pipe(NAME).labels == ("LOC", "PER")
        assert pred_ents(loaded.pipe(texts)) == expected
    assert pred_ents(nlp.pipe(texts, n_process=2, batch_size=2)) == expected


def test_empty_scoped_docs():
    nlp, _ = initialized("ce")
    empty = Example.from_dict(nlp.make_doc(""), {"entities": []})
    set_label_scope(empty.reference, ["PER"])
    one = Example.from_dict(nlp.make_doc("Paris"), {"entities": []})
    set_label_scope(one.reference, ["PER"])
    assert nlp.update([empty], losses={}) == {NAME: 0.0}
    losses = nlp.update([empty, one], losses={})
    assert numpy.isfinite(losses[NAME]) and losses[NAME] > 0
    pipe = nlp.get_pipe(NAME)
    candidates = enumerate_candidates(pipe.model.ops, [0], WIDTH)
    assert pipe.get_loss([empty], SpanScores(candidates, numpy.zeros((0, 3), dtype="float32")))[0] == 0.0


# -- devices -----------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["ce", "wce1", "focal_alpha"])
def test_scoped_update_round_trips_do_not_grow_with_docs(fake_ops, loss):
    (few, many), plain = COMPONENT.update_counts(fake_ops, loss, sizes=(3, 30))
    assert few.round_trips == many.round_trips and many.loops == 0
    for counts, without in zip((few, many), plain):
        # the trained rows' classes come back in the copy the loss makes without scopes, and the
        # scopes cost two uploads per batch: the rows' gold ids and the mask of their allowed classes
        assert counts.round_trips == without.round_trips and counts.uploads == without.uploads + 2
        assert counts.float64 == without.float64


# -- init-config --scoped ----------------------------------------------------------


def test_init_config_scoped_sampled_spancat_trains_with_spacy_train(tmp_path):
    write_corpora(tmp_path, people=PEOPLE, places=PLACES, dev=COMPLETE)
    out = tmp_path / "scoped.cfg"
    result, output = _invoke(
        out, "--component", NAME, "--scoped", f"{tmp_path / 'people.spacy'}=PER", "--scoped", f"{tmp_path / 'places.spacy'}=LOC"
    )
    assert result.exit_code == 0, output
    assert load_config(out, interpolate=False)["initialize"]["components"][NAME] == {"labels": ["LOC", "PER"]}
    trained = train_with_spacy(out, tmp_path / "dev.spacy", tmp_path / "model")
    assert trained.get_pipe(NAME).labels == ("LOC", "PER")

"""The two_task_ner component: labels, overfitting with every loss mode and
typing, the AUC parameters, the compositional schedule, serialisation,
multiprocessing, empty docs, thresholds and config validation."""
import numpy
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import fix_random_seed, registry
from thinc.api import Config

# registers the factory and the architecture in this process, whatever the
# installed package metadata says
import spacy_imbalance.pipeline.two_task_ner  # noqa: F401
from spacy_imbalance.models.two_task_tagger import get_alpha
from spacy_imbalance.pipeline.two_task_ner import DEFAULT_TWO_TASK_MODEL, TwoTaskNER

from .test_token_ner import (
    TRAIN_DATA,
    check_empty_docs,
    check_no_labels_is_a_clear_error,
    gold_ents,
    make_examples,
    pred_ents,
)

NAME = "two_task_ner"
LOSS_MODES = ["auc", "bce", "compositional"]
TYPINGS = ["one_vs_all", "type_head", "untyped"]
TEXTS = [text for text, _ in TRAIN_DATA]
# unseen sentences, so that scores are not all saturated
NEW_TEXTS = ["Paris and Kate .", "Kate likes New York and London .", "Bush sings here ."]


def make_nlp(typing: str = "one_vs_all", **cfg) -> Language:
    nlp = spacy.blank("en")
    config = dict(cfg)
    if typing == "untyped":
        config["typed"] = False
    else:
        config["typing"] = typing
    nlp.add_pipe(NAME, config=config)
    return nlp


def gold_for(examples, typing: str):
    return gold_ents(relabel(examples, "ENTITY") if typing == "untyped" else examples)


def relabel(examples, label: str):
    return [
        Example.from_dict(eg.predicted.copy(), {"entities": [(e.start_char, e.end_char, label) for e in eg.reference.ents]})
        for eg in examples
    ]


def train(nlp: Language, examples, n_iter: int, record=None) -> list:
    """Train from seed 0; ``record(ner)`` is called after every update."""
    fix_random_seed(0)
    optimizer = nlp.initialize(get_examples=lambda: examples)
    ner = nlp.get_pipe(NAME)
    history = []
    for _ in range(n_iter):
        phase = ner.phase
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses, drop=0.0)
        history.append((phase, losses[NAME]))
        if record is not None:
            record(ner)
    return history


def auc_state(ner: TwoTaskNER):
    params = ner.model.get_ref("auc_params")
    return params.get_param("a").copy(), params.get_param("b").copy(), get_alpha(params).tolist()


def entity_tokens(docs):
    return [{token.i for ent in doc.ents for token in ent} for doc in docs]


@pytest.fixture(scope="module", params=TYPINGS)
def trained(request):
    typing = request.param
    nlp = make_nlp(typing)
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=80)
    assert pred_ents(nlp.pipe(TEXTS)) == gold_for(examples, typing)
    return nlp, examples, typing


def test_default_model_config_resolves():
    model = registry.resolve(Config().from_str(DEFAULT_TWO_TASK_MODEL))["model"]
    refs = [model.get_ref(name) for name in ("tok2vec", "output_layer", "auc_params")]
    assert len({id(ref) for ref in refs}) == 3
    auc_params = refs[2]
    assert set(auc_params.param_names) == {"a", "b", "alpha"}
    # nO is inferred at initialize
    assert not refs[1].has_dim("nO")


@pytest.mark.parametrize("typing", TYPINGS)
def test_no_labels_is_a_clear_error(typing):
    check_no_labels_is_a_clear_error(make_nlp(typing), "two_task_ner")


# output width and number of binary tasks with K labels (see HeadLayout)
WIDTHS = {
    "one_vs_all": lambda k: (2 * k + 1 + 2 * k, 2 * k),
    "type_head": lambda k: (2 + k + 1 + 2 * k, 2),
    "untyped": lambda k: (2 + 3, 2),
}


@pytest.mark.parametrize("typing", TYPINGS)
def test_labels_implicit_from_data(typing):
    nlp = make_nlp(typing)
    nlp.initialize(get_examples=lambda: make_examples(nlp))
    ner = nlp.get_pipe(NAME)
    assert ner.labels == ("LOC", "PER")
    width, n_tasks = WIDTHS[typing](2)
    assert ner.model.get_ref("output_layer").get_dim("nO") == width
    assert ner.model.get_ref("auc_params").get_param("a").shape == (n_tasks,)
    assert get_alpha(ner.model.get_ref("auc_params")).tolist() == [0.0] * n_tasks


@pytest.mark.parametrize("typing", TYPINGS)
def test_labels_explicit_from_the_initialize_config(typing):
    nlp = make_nlp(typing)
    nlp.config["initialize"]["components"][NAME] = {"labels": ["PER", "LOC", "ORG"]}
    nlp.initialize(get_examples=lambda: make_examples(nlp))
    ner = nlp.get_pipe(NAME)
    assert ner.labels == ("LOC", "ORG", "PER")
    assert ner.model.get_ref("output_layer").get_dim("nO") == WIDTHS[typing](3)[0]
    with pytest.raises(ValueError, match="after the model is initialized"):
        ner.add_label("MISC")


@pytest.mark.slow
@pytest.mark.parametrize("typing", TYPINGS)
@pytest.mark.parametrize("loss_mode", LOSS_MODES)
def test_overfit(loss_mode, typing):
    nlp = make_nlp(typing, loss_mode=loss_mode)
    examples = make_examples(nlp)
    history = train(nlp, examples, n_iter=100)
    assert pred_ents(nlp.pipe(TEXTS)) == gold_for(examples, typing)
    # the compositional mode alternates two losses: compare each with itself
    for phase in {phase for phase, _ in history}:
        losses = [loss for p, loss in history if p == phase]
        assert abs(losses[-1]) < losses[0] / 5, (phase, losses[0], losses[-1])
    if typing == "untyped":
        examples = relabel(examples, "ENTITY")
    scores = nlp.evaluate(examples)
    assert scores["ents_f"] == 1.0
    assert scores["ents_macro_f"] == 1.0


@pytest.mark.parametrize("typing", TYPINGS)
def test_auc_training_updates_alpha_a_and_b(typing):
    nlp = make_nlp(typing, loss_mode="auc")
    examples = make_examples(nlp)
    alphas = []
    train(nlp, examples, n_iter=20, record=lambda ner: alphas.append(auc_state(ner)[2]))
    n_tasks = WIDTHS[typing](2)[1]
    assert all(len(alpha) == n_tasks for alpha in alphas)
    assert min(min(alpha) for alpha in alphas) >= 0.0
    assert any(value > 0 for value in alphas[-1])
    a, b, _ = auc_state(nlp.get_pipe(NAME))
    # initialised at a = 1, b = 0; the optimizer moves them
    assert not numpy.allclose(a, 1.0)
    assert not numpy.allclose(b, 0.0)


def test_bce_training_leaves_the_auc_parameters_alone():
    nlp = make_nlp(loss_mode="bce")
    examples = make_examples(nlp)
    alphas = []
    train(nlp, examples, n_iter=20, record=lambda ner: alphas.append(auc_state(ner)[2]))
    assert alphas == [[0.0] * 4] * 20
    a, b, _ = auc_state(nlp.get_pipe(NAME))
    assert a.tolist() == [1.0] * 4 and b.tolist() == [0.0] * 4


@pytest.mark.parametrize("typing", ["one_vs_all", "type_head"])
def test_compositional_mode_alternates_every_period(typing):
    nlp = make_nlp(typing, loss_mode="compositional", period=2)
    examples = make_examples(nlp)
    fix_random_seed(0)
    optimizer = nlp.initialize(get_examples=lambda: examples)
    ner = nlp.get_pipe(NAME)
    layout = ner.layout
    bio_only = numpy.zeros(layout.width, dtype=bool)
    bio_only[layout.bio] = True
    phases = []
    for _ in range(6):
        phase = ner.phase
        phases.append(phase)
        scores = ner.model.predict([eg.predicted for eg in examples])
        _, d_scores = ner.get_loss(examples, scores)
        d_flat = numpy.concatenate([ner.model.ops.to_numpy(d) for d in d_scores])
        alpha_before = auc_state(ner)[2]
        nlp.update(examples, sgd=optimizer)
        alpha_after = auc_state(ner)[2]
        if phase == "ce":
            # BIO cross entropy: only the BIO head gets a gradient, alpha stays
            assert numpy.any(d_flat[:, bio_only] != 0)
            assert numpy.all(d_flat[:, ~bio_only] == 0)
            assert alpha_after == alpha_before
        else:
            # the binary tasks (and the type head) get a gradient, alpha ascends
            assert numpy.all(d_flat[:, bio_only] == 0)
            assert numpy.any(d_flat[:, layout.tasks] != 0)
            if layout.typing == "type_head":
                assert numpy.any(d_flat[:, layout.types] != 0)
            assert alpha_after != alpha_before
    assert phases == ["ce", "ce", "auc", "auc", "ce", "ce"]


@pytest.mark.parametrize("loss_mode", ["auc", "bce"])
def test_single_loss_modes_have_one_phase(loss_mode):
    nlp = make_nlp(loss_mode=loss_mode)
    examples = make_examples(nlp)
    history = train(nlp, examples, n_iter=3)
    assert [phase for phase, _ in history] == [loss_mode] * 3


@pytest.mark.parametrize("loss_mode", LOSS_MODES)
def test_missing_gold_tokens_get_no_gradient(loss_mode):
    nlp = make_nlp("type_head", loss_mode=loss_mode)
    examples = make_examples(nlp)
    nlp.initialize(get_examples=lambda: examples)
    ner = nlp.get_pipe(NAME)
    words = ["Kate", "Bush", "sings", "loudly"]
    eg = Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["B-PER", "I-PER", "O", ""]))
    scores = ner.model.predict([eg.predicted])
    _, (d_scores,) = ner.get_loss([eg], scores)
    d_scores = ner.model.ops.to_numpy(d_scores)
    assert numpy.all(d_scores[3] == 0) and numpy.any(d_scores[:3] != 0)


def test_serialisation_round_trips_give_equal_predictions(trained, tmp_path):
    nlp, _, typing = trained
    ner = nlp.get_pipe(NAME)
    ner.set_thresholds(0.4, 0.6)
    texts = TEXTS + NEW_TEXTS
    expected = pred_ents(nlp.pipe(texts))
    a, b, alpha = auc_state(ner)
    assert any(value > 0 for value in alpha)
    nlp.to_disk(tmp_path / "model")
    from_bytes = make_nlp(typing)
    from_bytes.get_pipe(NAME).from_bytes(ner.to_bytes())
    ner.set_thresholds(0.5, 0.5)
    for loaded in (spacy.load(tmp_path / "model"), from_bytes):
        loaded_ner = loaded.get_pipe(NAME)
        assert pred_ents(loaded.pipe(texts)) == expected
        assert loaded_ner.labels == ner.labels
        assert loaded_ner.cfg["typing"] == typing
        # srsly's JSON reader gives 0.6 back as 0.6000000000000001
        assert (loaded_ner.cfg["en_threshold"], loaded_ner.cfg["be_threshold"]) == pytest.approx((0.4, 0.6))
        loaded_a, loaded_b, loaded_alpha = auc_state(loaded_ner)
        assert loaded_a.tolist() == a.tolist()
        assert loaded_b.tolist() == b.tolist()
        assert loaded_alpha == alpha


def test_pipe_with_two_processes_equals_call(trained):
    nlp, _, _ = trained
    texts = (TEXTS + NEW_TEXTS) * 2
    expected = [pred_ents([nlp(text)])[0] for text in texts]
    assert any(expected)
    assert pred_ents(nlp.pipe(texts, n_process=2, batch_size=2)) == expected


def test_empty_docs(trained):
    nlp, _, _ = trained
    check_empty_docs(nlp, NAME)


def test_higher_en_threshold_never_adds_entity_tokens(trained):
    nlp, _, _ = trained
    ner = nlp.get_pipe(NAME)
    texts = TEXTS + NEW_TEXTS
    try:
        found = []
        for en_threshold in (0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 0.9999):
            ner.set_thresholds(en_threshold, 0.5)
            found.append(entity_tokens(nlp.pipe(texts)))
        for lower, higher in zip(found, found[1:]):
            assert all(h <= l for l, h in zip(lower, higher))
        # not vacuous: the thresholds did change the predictions
        assert sum(map(len, found[0])) > sum(map(len, found[-1]))
        # the begin threshold only splits entities, it never changes which tokens are in one
        ner.set_thresholds(0.5, 0.001)
        low_be = entity_tokens(nlp.pipe(texts))
        ner.set_thresholds(0.5, 0.9999)
        assert entity_tokens(nlp.pipe(texts)) == low_be
        with pytest.raises(ValueError, match="en_threshold"):
            ner.set_thresholds(1.0, 0.5)
    finally:
        ner.set_thresholds(0.5, 0.5)


@pytest.mark.parametrize(
    "config,setting",
    [
        ({"loss_mode": "hinge"}, "loss_mode"),
        ({"typing": "softmax"}, "typing"),
        ({"lambda_": -1.0}, "lambda_"),
        ({"period": 0}, "period"),
        ({"en_threshold": 0.0}, "en_threshold"),
        ({"en_threshold": 1.2}, "en_threshold"),
        ({"be_threshold": -0.1}, "be_threshold"),
        ({"untyped_label": ""}, "untyped_label"),
        ({"untyped_label": "  "}, "untyped_label must be a non-empty label, got '  '"),
        ({"auc_loss": {"@losses": "spacy-imbalance.AUCMarginLoss.v1", "margin": 0.0}}, "margin"),
        ({"auc_loss": {"@losses": "spacy-imbalance.AUCMarginLoss.v1", "alpha_lr": 0.0}}, "alpha_lr"),
    ],
)
def test_bad_settings_fail_when_the_pipe_is_built(config, setting):
    nlp = spacy.blank("en")
    with pytest.raises(Exception, match=setting):
        nlp.add_pipe(NAME, config=config)
    assert NAME not in nlp.pipe_names


@pytest.mark.parametrize("loss_mode", LOSS_MODES)
@pytest.mark.parametrize("loss", ["CrossEntropy", "FocalLoss"])
def test_auc_loss_must_be_an_auc_margin_loss(loss, loss_mode):
    """Any registered loss resolves in the auc_loss block; a token loss used
    to be accepted and crashed with a TypeError at the first AUC update."""
    nlp = spacy.blank("en")
    config = {"loss_mode": loss_mode, "auc_loss": {"@losses": f"spacy-imbalance.{loss}.v1"}}
    with pytest.raises(ValueError) as excinfo:
        nlp.add_pipe(NAME, config=config)
    message = str(excinfo.value)
    assert "two_task_ner 'two_task_ner': auc_loss must be an AUC margin loss" in message
    assert '"spacy-imbalance.AUCMarginLoss.v1"' in message and f"got {loss}" in message
    assert NAME not in nlp.pipe_names


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_lambda_must_be_finite(value):
    """spaCy's config refuses inf and nan, but the class is public: an
    infinite begin-task weight made every AUC and BCE loss nan."""
    model = registry.resolve(Config().from_str(DEFAULT_TWO_TASK_MODEL))["model"]
    with pytest.raises(ValueError, match=f"two_task_ner 'ner': lambda_ must be >= 0 and finite .*, got lambda_={value}"):
        TwoTaskNER(spacy.blank("en").vocab, model, "ner", lambda_=value)


def test_set_thresholds_is_validated_and_kept_in_cfg():
    nlp = make_nlp()
    ner = nlp.get_pipe(NAME)
    ner.set_thresholds(0.25, 0.75)
    assert (ner.cfg["en_threshold"], ner.cfg["be_threshold"]) == (0.25, 0.75)
    for en, be, setting in ((0.0, 0.5, "en_threshold"), (0.5, 1.0, "be_threshold")):
        with pytest.raises(ValueError, match=setting):
            ner.set_thresholds(en, be)
    assert (ner.cfg["en_threshold"], ner.cfg["be_threshold"]) == (0.25, 0.75)


def test_get_loss_changes_nothing():
    """Computing a loss (e.g. for a dev-loss log) leaves a, b, alpha and the
    queued gradients alone; only update moves them."""
    nlp = make_nlp("one_vs_all", loss_mode="auc")
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=5)
    ner = nlp.get_pipe(NAME)
    params = ner.model.get_ref("auc_params")
    before = auc_state(ner)
    grad_a = params.get_grad("a").copy() if params.has_grad("a") else None
    scores = ner.model.predict([eg.predicted for eg in examples])
    first = ner.get_loss(examples, scores)[0]
    assert ner.get_loss(examples, scores)[0] == first
    after = auc_state(ner)
    assert numpy.array_equal(before[0], after[0]) and numpy.array_equal(before[1], after[1]) and before[2] == after[2]
    now = params.get_grad("a") if params.has_grad("a") else None
    assert (grad_a is None and now is None) or numpy.array_equal(grad_a, now)


def test_preset_entities_are_kept(trained):
    nlp, _, typing = trained
    doc = nlp.make_doc("Kate Bush sings in New York .")
    for name, proc in nlp.pipeline:
        if name != NAME:
            doc = proc(doc)
    doc.set_ents([doc.char_span(19, 27, label="CITY")], default="unmodified")
    doc = nlp.get_pipe(NAME)(doc)
    person = "ENTITY" if typing == "untyped" else "PER"
    assert [(e.text, e.label_) for e in doc.ents] == [("Kate Bush", person), ("New York", "CITY")]


def held_out_texts(share: float, n: int):
    from spacy_imbalance.pipeline.tagging.fitted_thresholds import is_held_out

    texts = [f"Kate met Bush in Paris on day {i} ." for i in range(200)]
    out = [t for t in texts if is_held_out(t, share)][:n]
    kept = [t for t in texts if not is_held_out(t, share)][:n]
    return out, kept


def kate_example(nlp, text):
    return Example.from_dict(nlp.make_doc(text), {"entities": [(0, 4, "PER"), (9, 13, "PER"), (17, 22, "LOC")]})


@pytest.mark.parametrize("loss_mode", LOSS_MODES)
def test_held_out_sentences_get_no_gradient(loss_mode):
    nlp = make_nlp("type_head", loss_mode=loss_mode, threshold_holdout=0.2)
    (out,), (kept,) = held_out_texts(0.2, 1)
    examples = [kate_example(nlp, out), kate_example(nlp, kept)]
    nlp.initialize(get_examples=lambda: examples)
    ner = nlp.get_pipe(NAME)
    scores = ner.model.predict([eg.predicted for eg in examples])
    _, d_scores = ner.get_loss(examples, scores)
    d_out, d_kept = (ner.model.ops.to_numpy(d) for d in d_scores)
    assert numpy.all(d_out == 0) and numpy.any(d_kept != 0)
    # fixed thresholds: nothing is fitted, so nothing is held out
    ner.set_thresholds(0.5, 0.5)
    _, d_scores = ner.get_loss(examples, scores)
    assert numpy.any(ner.model.ops.to_numpy(d_scores[0]) != 0)


def test_thresholds_are_fitted_on_held_out_sentences_and_saved(tmp_path):
    nlp = make_nlp("type_head", threshold_holdout=0.3)
    out, kept = held_out_texts(0.3, 4)
    examples = [kate_example(nlp, t) for t in out + kept]
    ner = nlp.get_pipe(NAME)
    assert ner.thresholds == (0.5, 0.5) and ner.cfg["fitted_thresholds"] is None
    train(nlp, examples, n_iter=30)
    histograms = ner.cfg["score_histograms"]
    # 4 held-out sentences x 3 single-token entities: each update counts
    # those 12 entity tokens (never the trained ones), earlier updates decayed
    from spacy_imbalance.pipeline.tagging.fitted_thresholds import DECAY

    assert sum(histograms["entity"][1]) == pytest.approx(12 * (1 - DECAY**30) / (1 - DECAY), rel=1e-4)
    assert ner.thresholds == tuple(ner.cfg["fitted_thresholds"])
    assert all(0 < t < 1 for t in ner.thresholds)
    nlp.to_disk(tmp_path / "model")
    again = spacy.load(tmp_path / "model")
    assert again.get_pipe(NAME).thresholds == ner.thresholds
    texts = NEW_TEXTS + out
    assert pred_ents(again.pipe(texts)) == pred_ents(nlp.pipe(texts))


def test_fixed_thresholds_are_not_refitted():
    nlp = make_nlp("one_vs_all", en_threshold=0.4, be_threshold=0.6)
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=5)
    ner = nlp.get_pipe(NAME)
    assert ner.thresholds == (0.4, 0.6) and ner.cfg["score_histograms"] is None
    # one fixed, one fitted
    nlp = make_nlp("one_vs_all", en_threshold=0.4, threshold_holdout=0.0)
    train(nlp, make_examples(nlp), n_iter=5)
    ner = nlp.get_pipe(NAME)
    assert ner.thresholds[0] == 0.4 and ner.cfg["fitted_thresholds"] is not None


@pytest.mark.parametrize("value", [-0.1, 0.6, float("nan")])
def test_threshold_holdout_is_validated(value):
    nlp = spacy.blank("en")
    with pytest.raises(Exception, match="threshold_holdout"):
        nlp.add_pipe(NAME, config={"threshold_holdout": value})

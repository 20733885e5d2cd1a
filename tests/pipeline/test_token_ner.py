"""The token_ner component: labels, overfitting with every loss, serialisation,
multiprocessing, empty docs, partial annotation and config validation."""
import io
import re

import numpy
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.pipeline.token_ner import DEFAULT_TOKEN_NER_MODEL, TokenNER

from ..device import seeded_updates

TRAIN_DATA = [
    ("I like London and Paris .", [(7, 13, "LOC"), (18, 23, "LOC")]),
    ("Kate Bush sings in New York .", [(0, 9, "PER"), (19, 27, "LOC")]),
    ("Nothing to see here .", []),
    ("Talk to Kate .", [(8, 12, "PER")]),
]

LOSSES = {
    "ce": {"@losses": "spacy-imbalance.CrossEntropy.v1"},
    "wce1": {"@losses": "spacy-imbalance.WeightedCrossEntropy.v1", "scheme": "inverse_frequency"},
    "wce2": {"@losses": "spacy-imbalance.WeightedCrossEntropy.v1", "scheme": "log", "beta": 1.0},
    "focal": {"@losses": "spacy-imbalance.FocalLoss.v1", "gamma": 2.0},
    "dice": {"@losses": "spacy-imbalance.DiceLoss.v1", "alpha": 0.1, "gamma": 1.0},
    "mom": {"@losses": "spacy-imbalance.MoMLoss.v1", "lambda_": 0.3, "base": {"@losses": "spacy-imbalance.CrossEntropy.v1"}},
    "mom_focal": {"@losses": "spacy-imbalance.MoMLoss.v1", "lambda_": 0.3, "base": {"@losses": "spacy-imbalance.FocalLoss.v1"}},
    "mom_v2": {"@losses": "spacy-imbalance.MoMLoss.v2", "lambda_": 0.3, "max_length": 16},
}


def make_examples(nlp: Language):
    examples = []
    for text, ents in TRAIN_DATA:
        doc = nlp.make_doc(text)
        examples.append(Example.from_dict(doc, {"entities": ents}))
    return examples


def gold_ents(examples):
    return [[(e.start_char, e.end_char, e.label_) for e in eg.reference.ents] for eg in examples]


def pred_ents(docs):
    return [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in docs]


def make_nlp(loss=None, **cfg) -> Language:
    """A blank pipeline with token_ner alone (loss None: the factory's default)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("token_ner", config=cfg if loss is None else {**cfg, "loss": loss})
    return nlp


def train(nlp: Language, examples, n_iter: int = 60) -> list:
    """Train from seed 0 without dropout: the loss of the pipeline's only
    component after every update. Shared with test_sampled_spancat."""
    (name,) = nlp.pipe_names
    return seeded_updates(nlp, examples, name, n_iter, drop=0.0)


@pytest.fixture(scope="module")
def trained():
    nlp = make_nlp()
    examples = make_examples(nlp)
    return nlp, examples, train(nlp, examples, n_iter=60)


def test_default_model_config_resolves():
    model = registry.resolve(Config().from_str(DEFAULT_TOKEN_NER_MODEL))["model"]
    assert model.get_ref("tok2vec") is not None and model.get_ref("output_layer") is not None


def check_no_labels_is_a_clear_error(nlp: Language, name: str) -> None:
    """Initialising on data without a single entity fails, naming component
    ``name``, rather than building an output layer with no labels. Shared
    with test_sampled_spancat and test_two_task_ner."""
    examples = [Example.from_dict(nlp.make_doc("no entities here"), {"entities": []})]
    with pytest.raises(ValueError, match=f"{name}' has no labels"):
        nlp.initialize(get_examples=lambda: examples)


def test_no_labels_is_a_clear_error():
    check_no_labels_is_a_clear_error(make_nlp(), "token_ner")


def test_labels_implicit_and_explicit():
    nlp = make_nlp()
    examples = make_examples(nlp)
    nlp.initialize(get_examples=lambda: examples)
    ner = nlp.get_pipe("token_ner")
    assert ner.labels == ("LOC", "PER")
    assert ner.tags == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    nlp2 = make_nlp()
    nlp2.config["initialize"]["components"]["token_ner"] = {"labels": ["PER", "LOC", "ORG"]}
    nlp2.initialize(get_examples=lambda: examples)
    assert nlp2.get_pipe("token_ner").labels == ("LOC", "ORG", "PER")
    with pytest.raises(ValueError, match="cannot add label 'MISC' once the output layer"):
        nlp2.get_pipe("token_ner").add_label("MISC")


def test_labels_added_before_initialize_are_kept():
    nlp = make_nlp()
    ner = nlp.get_pipe("token_ner")
    assert ner.add_label("ORG") == 1 and ner.add_label("ORG") == 0
    examples = make_examples(nlp)
    nlp.initialize(get_examples=lambda: examples)
    assert ner.labels == ("LOC", "ORG", "PER")
    for bad in ("", "NEW YORK", " LOC"):
        with pytest.raises(ValueError, match="non-empty string without spaces"):
            make_nlp().get_pipe("token_ner").add_label(bad)


def test_reinitialize_with_another_label_set_is_a_clear_error():
    nlp = make_nlp()
    examples = make_examples(nlp)
    nlp.initialize(get_examples=lambda: examples)
    nlp.config["initialize"]["components"]["token_ner"] = {"labels": ["LOC", "PER", "MISC"]}
    with pytest.raises(ValueError, match="output layer has 5 tags but the labels LOC, MISC, PER need 7"):
        nlp.initialize(get_examples=lambda: examples)


def test_preset_entities_are_kept(trained):
    """An entity set before token_ner (e.g. by an entity_ruler) stays; a
    prediction that overlaps it is dropped, the others are written."""
    nlp, _, _ = trained
    doc = nlp.make_doc("Kate Bush sings in New York .")
    for name, proc in nlp.pipeline:
        if name != "token_ner":
            doc = proc(doc)
    doc.set_ents([doc.char_span(19, 27, label="CITY")], default="unmodified")
    doc = nlp.get_pipe("token_ner")(doc)
    assert [(e.text, e.label_) for e in doc.ents] == [("Kate Bush", "PER"), ("New York", "CITY")]


def test_unknown_gold_label_is_an_error():
    nlp = make_nlp()
    examples = make_examples(nlp)
    nlp.config["initialize"]["components"]["token_ner"] = {"labels": ["LOC"]}
    nlp.initialize(get_examples=lambda: examples)
    with pytest.raises(ValueError, match="'PER' is not among"):
        nlp.update(examples)


def test_overfit_default_loss(trained):
    nlp, examples, history = trained
    assert history[-1] < 0.01 < history[0]
    assert pred_ents(nlp.pipe([eg.reference.text for eg in examples])) == gold_ents(examples)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_overfit_with_every_loss(name):
    nlp = make_nlp(loss=LOSSES[name])
    examples = make_examples(nlp)
    history = train(nlp, examples, n_iter=80)
    assert history[-1] < 0.5 * history[0]
    assert pred_ents(nlp.pipe([eg.reference.text for eg in examples])) == gold_ents(examples)


def test_biluo_scheme_and_scored_spans():
    nlp = make_nlp(tag_scheme="BILUO", spans_key="ents_scored")
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=60)
    assert nlp.get_pipe("token_ner").tags[:5] == ["O", "B-LOC", "I-LOC", "L-LOC", "U-LOC"]
    docs = list(nlp.pipe([eg.reference.text for eg in examples]))
    assert pred_ents(docs) == gold_ents(examples)
    for doc in docs:
        group = doc.spans["ents_scored"]
        assert [(s.start, s.end, s.label_) for s in group] == [(e.start, e.end, e.label_) for e in doc.ents]
        assert all(0.5 < score <= 1.0 for score in group.attrs["scores"])


def test_serialisation_round_trips_give_equal_predictions(trained, tmp_path):
    nlp, examples, _ = trained
    texts = [eg.reference.text for eg in examples] + ["Paris and Kate ."]
    expected = pred_ents(nlp.pipe(texts))
    nlp.to_disk(tmp_path / "model")
    from_disk = spacy.load(tmp_path / "model")
    assert pred_ents(from_disk.pipe(texts)) == expected
    from_bytes = make_nlp()
    from_bytes.get_pipe("token_ner").from_bytes(nlp.get_pipe("token_ner").to_bytes())
    assert pred_ents(from_bytes.pipe(texts)) == expected


def test_weighted_loss_restores_class_counts(tmp_path):
    nlp = make_nlp(loss=LOSSES["wce2"])
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=5)
    ner = nlp.get_pipe("token_ner")
    counts = ner.cfg["class_counts"]
    # O B-LOC I-LOC B-PER I-PER over the four sentences, counted by hand
    assert counts == [15, 3, 1, 2, 1]
    nlp.to_disk(tmp_path / "wce")
    loaded = spacy.load(tmp_path / "wce").get_pipe("token_ner")
    assert loaded.cfg["class_counts"] == counts
    assert loaded.loss.class_counts == counts
    # the restored loss gives the same value on the same scores
    scores = ner.model.predict([eg.predicted for eg in examples])
    assert loaded.get_loss(examples, scores)[0] == pytest.approx(ner.get_loss(examples, scores)[0])


def test_pipe_twice_equals_call(trained):
    nlp, examples, _ = trained
    texts = [eg.reference.text for eg in examples]
    first = pred_ents(nlp.pipe(texts, batch_size=2))
    assert pred_ents(nlp.pipe(texts, batch_size=3)) == first == [pred_ents([nlp(t)])[0] for t in texts]


def test_pipe_with_two_processes_equals_call(trained):
    nlp, examples, _ = trained
    texts = [eg.reference.text for eg in examples] * 3
    expected = [pred_ents([nlp(text)])[0] for text in texts]
    assert pred_ents(nlp.pipe(texts, n_process=2, batch_size=2)) == expected


def check_empty_docs(nlp: Language, name: str) -> None:
    """Empty docs get no entities, alone or between others, and an update on
    an empty example costs 0 and leaves the output layer alone. Shared with
    test_two_task_ner: both taggers must handle them the same way."""
    assert len(nlp("").ents) == 0
    docs = list(nlp.pipe(["", "Kate Bush sings in New York .", ""]))
    assert [len(d.ents) for d in docs] == [0, 2, 0]
    assert [len(d.ents) for d in nlp.pipe(["", ""])] == [0, 0]
    ner = nlp.get_pipe(name)
    before = ner.model.get_ref("output_layer").get_param("W").copy()
    losses = ner.update([Example(nlp.make_doc(""), nlp.make_doc(""))], losses={})
    assert losses == {name: 0.0}
    assert numpy.array_equal(ner.model.get_ref("output_layer").get_param("W"), before)


def test_empty_docs(trained):
    nlp, _, _ = trained
    check_empty_docs(nlp, "token_ner")


def test_missing_gold_tokens_get_no_gradient(trained):
    nlp, _, _ = trained
    ner = nlp.get_pipe("token_ner")
    words = ["Kate", "Bush", "sings", "loudly"]
    predicted = Doc(nlp.vocab, words=words)
    reference = Doc(nlp.vocab, words=words, ents=["B-PER", "I-PER", "", ""])
    eg = Example(predicted, reference)
    scores = ner.model.predict([predicted])
    loss, (d_scores,) = ner.get_loss([eg], scores)
    assert loss > 0
    assert numpy.all(d_scores[2:] == 0) and numpy.any(d_scores[:2] != 0)


def test_partially_annotated_training_leaves_missing_tokens_untaught():
    """'Paris' is LOC in one example and unannotated in the other. Trained on
    both, it is still found: the unannotated copy teaches neither O nor LOC.
    Trained on the same copy with 'Paris' as explicit O, it is not."""
    words = ["Kate", "visits", "Paris"]

    def fit(second_tags):
        nlp = make_nlp()
        vocab = nlp.vocab
        full = Example(Doc(vocab, words=words), Doc(vocab, words=words, ents=["B-PER", "O", "B-LOC"]))
        other = Example(Doc(vocab, words=words), Doc(vocab, words=words, ents=second_tags))
        train(nlp, [full, other, other, other], n_iter=40)
        return [e.label_ for e in nlp(Doc(nlp.vocab, words=words)).ents]

    assert fit(["B-PER", "O", ""]) == ["PER", "LOC"]
    assert fit(["B-PER", "O", "O"]) == ["PER"]


@pytest.mark.parametrize(
    "loss,message",
    [
        ({"@losses": "spacy-imbalance.MoMLoss.v1", "lambda_": 1.5}, r"lambda_ must be in \[0, 1\]"),
        ({"@losses": "spacy-imbalance.FocalLoss.v1", "gamma": -1.0}, r"gamma must be in \[0, 1e\+38\]"),
        ({"@losses": "spacy-imbalance.WeightedCrossEntropy.v1", "scheme": "bogus"}, r"scheme[\s\S]*bogus"),
    ],
)
def test_bad_loss_settings_fail_when_the_pipe_is_built(loss, message):
    with pytest.raises(Exception, match=message):
        make_nlp(loss=loss)


def test_bad_tag_scheme_fails_when_the_pipe_is_built():
    with pytest.raises(Exception, match=r"tag_scheme[\s\S]*IOB1"):
        make_nlp(tag_scheme="IOB1")


@pytest.mark.parametrize("spans_key", ["", "  ", "\t"])
def test_blank_spans_key_fails_when_the_pipe_is_built(spans_key):
    """An empty or blank span group name would hide the scored entities under
    a key nobody looks up."""
    message = f"token_ner 'token_ner': spans_key must be a non-empty span group name or null, got {spans_key!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        make_nlp(spans_key=spans_key)
    assert make_nlp(spans_key=None).get_pipe("token_ner").cfg["spans_key"] is None


def test_spans_key_survives_serialisation(tmp_path):
    nlp = make_nlp(spans_key="scored")
    examples = make_examples(nlp)
    train(nlp, examples, n_iter=30)
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    assert loaded.get_pipe("token_ner").cfg["spans_key"] == "scored"
    doc, expected = loaded("Talk to Kate ."), nlp("Talk to Kate .")
    assert [(s.start, s.end, s.label_) for s in doc.spans["scored"]] == [(s.start, s.end, s.label_) for s in expected.spans["scored"]]
    assert doc.spans["scored"].attrs["scores"] == pytest.approx(expected.spans["scored"].attrs["scores"])


def test_uninitialized_component_serialises():
    nlp = make_nlp()
    data = nlp.get_pipe("token_ner").to_bytes()
    other = make_nlp().get_pipe("token_ner").from_bytes(data)
    assert other.labels == () and other.cfg["tag_scheme"] == "BIO"


def test_spacy_train_in_process(tmp_path):
    """init_nlp + train on a .spacy file through the shipped config."""
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop

    nlp = spacy.blank("en")
    db = DocBin(docs=[eg.reference for eg in make_examples(nlp)])
    db.to_disk(tmp_path / "toy.spacy")
    from ..conftest import ROOT

    config = spacy.util.load_config(
        ROOT / "configs" / "token_ner_mom.cfg",
        overrides={
            "paths.train": str(tmp_path / "toy.spacy"),
            "paths.dev": str(tmp_path / "toy.spacy"),
            "training.max_steps": 30,
            "training.eval_frequency": 10,
        },
        interpolate=False,
    )
    trained_nlp = init_nlp(config)
    (tmp_path / "out").mkdir()
    trained_nlp, _ = train_loop(trained_nlp, tmp_path / "out", stdout=io.StringIO(), stderr=io.StringIO())
    assert isinstance(trained_nlp.get_pipe("token_ner"), TokenNER)
    assert (tmp_path / "out" / "model-best").exists()

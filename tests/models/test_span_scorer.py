"""SpanScorer.v1: settings validation, the whole model's forward/backward,
the prediction fast path against the plain head, and the hidden layer's
saved layout (its span representation layer:
tests/layers/test_span_representation.py)."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Config, Maxout, NumpyOps

from spacy_imbalance.models.span_scorer import candidate_hidden, candidate_logits
from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_SAMPLED_SPANCAT_MODEL
from spacy_imbalance.spans.candidates import enumerate_candidates

# the default head's hidden layer (random_model's and the factory's)
DEFAULT_HEAD = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)["model"]
HIDDEN = DEFAULT_HEAD["hidden_width"]

OPS = NumpyOps()


def check_setting_refused(model_config: str, setting: str, value, message: str) -> None:
    """Resolving ``model_config`` with its [model] ``setting`` set to ``value``
    fails with ``message``: bad settings must fail when the model is built.
    Shared with test_transformer_features."""
    config = Config().from_str(model_config)
    config["model"][setting] = value
    with pytest.raises(ValueError, match=message):
        registry.resolve(config)


@pytest.mark.parametrize(
    "setting,value,message",
    [
        ("representation", "mean", "'mean' is not typing.Literal"),
        ("hidden_width", 0, "hidden_width must be an integer >= 1"),
        ("dropout", 1.0, r"dropout must be in \[0, 1\)"),
        ("width_embedding", -3, "width_embedding must be an integer >= 1"),
    ],
)
def test_invalid_model_settings(setting, value, message):
    check_setting_refused(DEFAULT_SAMPLED_SPANCAT_MODEL, setting, value, message)


def test_whole_model_scores_every_candidate_and_backpropagates():
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    model = registry.resolve(config)["model"]
    model.get_ref("span_repr").set_dim("nV", 3)
    model.attrs["max_span_width"] = 3
    model.get_ref("output_layer").set_dim("nO", 4)
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("one two three four"), nlp.make_doc(""), nlp.make_doc("five")]
    model.initialize(X=docs)
    output_layer = model.get_ref("output_layer")
    # the zero-initialised output layer would stop every gradient below it
    output_layer.set_param("W", numpy.random.default_rng(0).normal(size=(4, HIDDEN)).astype("f"))
    scores, backprop = model.begin_update(docs)
    assert scores.logits.shape == (4 + 3 + 2 + 1, 4)
    assert scores.candidates.doc_counts == [9, 0, 1]
    backprop(model.ops.alloc2f(*scores.logits.shape) + 1.0)
    tok2vec = model.get_ref("tok2vec")
    grads = [node.get_grad(name) for node in tok2vec.walk() for name in node.param_names if node.has_grad(name)]
    assert grads and any(float(numpy.abs(g).sum()) > 0 for g in grads)


def test_hidden_ref_is_the_output_layers_input():
    """``hidden`` (Top-Neg v2's space) is the scorer's first layer: the output
    layer applied to it gives the scorer's logits."""
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    model = registry.resolve(config)["model"]
    model.get_ref("span_repr").set_dim("nV", 3)
    model.attrs["max_span_width"] = 3
    model.get_ref("output_layer").set_dim("nO", 4)
    model.initialize(X=[spacy.blank("en").make_doc("one two three")])
    scorer, hidden, output_layer = (model.get_ref(name) for name in ("scorer", "hidden", "output_layer"))
    assert scorer.layers == [hidden, output_layer]
    output_layer.set_param("W", numpy.random.default_rng(0).normal(size=(4, HIDDEN)).astype("f"))
    X = numpy.random.default_rng(1).normal(size=(5, model.get_ref("span_repr").get_dim("nO"))).astype("f")
    H = hidden.predict(X)
    assert H.shape == (5, HIDDEN)
    numpy.testing.assert_allclose(output_layer.predict(H), scorer.predict(X), rtol=1e-5)


def random_model(representation, max_width, n_classes=5, seed=0):
    """An initialised SpanScorer.v1 whose head has random weights everywhere
    (the output layer is zero-initialised, LayerNorm starts as 1 and 0)."""
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    config["model"]["representation"] = representation
    model = registry.resolve(config)["model"]
    model.get_ref("span_repr").set_dim("nV", max_width)
    model.attrs["max_span_width"] = max_width
    model.get_ref("output_layer").set_dim("nO", n_classes)
    model.initialize(X=[spacy.blank("en").make_doc("one two three")])
    rng = numpy.random.default_rng(seed)
    for node in model.get_ref("head").walk():
        for name in node.param_names:
            node.set_param(name, node.ops.asarray(rng.normal(size=node.get_param(name).shape).astype("f")))
    return model


def random_docs(lengths, seed=0):
    rng = numpy.random.default_rng(seed)
    vocab = spacy.blank("en").vocab
    return [Doc(vocab, words=[f"w{int(i)}" for i in rng.integers(0, 50, size=n)]) for n in lengths]


@pytest.mark.parametrize("representation", ["endpoints_width", "endpoints_product", "endpoints_mean_max"])
@pytest.mark.parametrize("max_width", [1, 3, 8])
def test_prediction_fast_path_matches_the_plain_head(representation, max_width):
    """model.predict (per-token projections, a run of candidates at a time)
    gives the candidates and logits of the head run on the concatenated span
    vectors; the 300-token doc makes more candidates than one CPU run."""
    model = random_model(representation, max_width)
    docs = random_docs([7, 0, 1, 300, 0, 4])
    scores = model.predict(docs)
    candidates = enumerate_candidates(OPS, [len(doc) for doc in docs], max_width)
    for field in ("starts", "ends", "doc_ids"):
        numpy.testing.assert_array_equal(getattr(scores.candidates, field), getattr(candidates, field))
    X = OPS.flatten(model.get_ref("tok2vec").predict(docs))
    span_input = (X, candidates.starts, candidates.ends)
    plain = model.get_ref("head").predict(span_input)
    assert scores.logits.shape == plain.shape == (len(candidates), 5)
    numpy.testing.assert_allclose(scores.logits, plain, rtol=1e-4, atol=1e-4 * float(numpy.abs(plain).max()))
    hidden = model.get_ref("hidden").predict(model.get_ref("span_repr").predict(span_input))
    numpy.testing.assert_allclose(candidate_hidden(model, X, candidates), hidden, rtol=1e-4, atol=1e-4)
    numpy.testing.assert_allclose(candidate_logits(model, X, candidates), scores.logits, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("representation", ["endpoints_width", "endpoints_product", "endpoints_mean_max"])
def test_fast_path_without_candidates(representation):
    """A batch of empty docs (the component does not run the model on one:
    the tok2vec cannot take it) has no token vectors and no candidates."""
    model = random_model(representation, 3)
    candidates = enumerate_candidates(OPS, [0, 0], 3)
    X = OPS.alloc2f(0, 0)
    assert candidate_logits(model, X, candidates).shape == (0, 5)
    assert candidate_hidden(model, X, candidates).shape == (0, HIDDEN)


def test_prediction_mode_has_no_backward_pass():
    model = random_model("endpoints_width", 3)
    scores, backprop = model(random_docs([3]), is_train=False)
    with pytest.raises(ValueError, match="computed in prediction mode"):
        backprop(OPS.alloc2f(*scores.logits.shape))


@pytest.mark.parametrize("representation", ["endpoints_width", "endpoints_mean_max"])
def test_a_max_width_beyond_the_width_embedding_is_refused_on_the_host(representation):
    model = random_model(representation, 3)
    model.attrs["max_span_width"] = 4
    with pytest.raises(ValueError, match="max_span_width 4 exceeds the width embedding's 3 widths"):
        model.predict(random_docs([5]))


def test_hidden_keeps_the_structure_and_weights_of_thinc_maxout():
    """The hidden layer is built by hand (to reach the maxout's W and b) with
    the nodes, names and parameters of Maxout(normalize=True, dropout=...),
    so pipelines saved before load into it and predict the same."""
    model = random_model("endpoints_width", 3)
    hidden = model.get_ref("hidden")
    reference = Maxout(nO=HIDDEN, nP=3, dropout=DEFAULT_HEAD["dropout"], normalize=True)
    reference.initialize(X=OPS.alloc2f(2, model.get_ref("span_repr").get_dim("nO")))

    def layout(layer):
        return [(node.name, node.param_names, {d: node.maybe_get_dim(d) for d in node.dim_names}) for node in layer.walk()]

    assert layout(hidden) == layout(reference)
    assert [(model.get_ref("maxout").name, model.get_ref("layer_norm").name)] == [("maxout", "layernorm")]
    X = numpy.random.default_rng(0).normal(size=(4, reference.get_dim("nI"))).astype("f")
    hidden.from_bytes(reference.to_bytes())
    numpy.testing.assert_array_equal(hidden.predict(X), reference.predict(X))


@pytest.mark.parametrize("n_docs", [2, 20])
def test_no_device_round_trip_beyond_the_tok2vecs(n_docs):
    """On the fake cupy of tests/device.py (implicit host conversions raise,
    copies and syncs are counted) prediction and a training step's forward
    and backward add no round trip to their tok2vec's, whatever the number
    of docs: widths are validated on the host, and the lengths that
    Ops.unflatten splits on stay there."""
    device = pytest.importorskip("tests.device")
    with device.fake_device() as ops:
        model = random_model("endpoints_width", 3)
        docs = random_docs([6] * n_docs)
        tok2vec = model.get_ref("tok2vec")
        with ops.measure() as tok2vec_only:
            tokvecs, backprop = tok2vec.begin_update(docs)
            backprop([ops.alloc2f(*t.shape) for t in tokvecs])
            tok2vec.predict(docs)
        with ops.measure() as whole:
            scores, backprop = model.begin_update(docs)
            backprop(ops.alloc2f(*scores.logits.shape))
            model.predict(docs)
    assert whole.round_trips == tok2vec_only.round_trips

"""SpanScorer.v1 on every device of the ``device_ops`` fixture: numpy's
logits and gradients, and prediction round trips that do not grow with the
number of docs (fake cupy)."""
import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import fix_random_seed, registry
from numpy.testing import assert_allclose
from thinc.api import Config

from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_SAMPLED_SPANCAT_MODEL

from ..device import device


def build_model(representation: str, max_width: int = 3):
    """An initialised scorer whose head has random weights (its output
    layer starts at zero, which would hide every difference)."""
    config = Config().from_str(DEFAULT_SAMPLED_SPANCAT_MODEL)
    config["model"]["representation"] = representation
    model = registry.resolve(config)["model"]
    model.get_ref("span_repr").set_dim("nV", max_width)
    model.attrs["max_span_width"] = max_width
    model.get_ref("output_layer").set_dim("nO", 4)
    fix_random_seed(0)
    model.initialize(X=docs([3]))
    rng = numpy.random.default_rng(0)
    for node in model.get_ref("head").walk():
        for name in node.param_names:
            shape = node.get_param(name).shape
            node.set_param(name, node.ops.asarray(rng.normal(scale=0.3, size=shape).astype("f")))
    return model


def docs(lengths, seed=0):
    rng = numpy.random.default_rng(seed)
    vocab = spacy.blank("en").vocab
    return [Doc(vocab, words=[f"w{int(i)}" for i in rng.integers(0, 50, size=n)]) for n in lengths]


def run(representation: str):
    """Logits of prediction, and of training with the summed tok2vec gradient."""
    model = build_model(representation)
    ops = model.ops
    batch = docs([5, 0, 2, 7], seed=1)
    predicted = ops.to_numpy(model.predict(batch).logits)
    scores, backprop = model.begin_update(batch)
    backprop(ops.alloc2f(*scores.logits.shape) + 1.0)
    tok2vec = model.get_ref("tok2vec")
    grads = [node.get_grad(name) for node in tok2vec.walk() for name in node.param_names if node.has_grad(name)]
    grad_sum = sum(float(ops.to_numpy(grad).sum()) for grad in grads)
    return predicted, ops.to_numpy(scores.logits), grad_sum


@pytest.mark.parametrize("representation", ["endpoints_width", "endpoints_product", "endpoints_mean_max"])
def test_span_scorer_on_device_equals_numpy(device_ops, representation):
    with device("numpy"):
        expected = run(representation)
    predicted, trained, grad_sum = run(representation)
    assert predicted.shape == (5 * 3 - 3 + 2 * 2 - 1 + 7 * 3 - 3, 4)
    if device_ops.name == "cupy":
        return  # cupy initialises the tok2vec from its own random stream
    assert_allclose(predicted, expected[0], rtol=1e-4, atol=1e-5)
    assert_allclose(trained, expected[1], rtol=1e-4, atol=1e-5)
    assert grad_sum == pytest.approx(expected[2], rel=1e-4)


def test_span_scorer_prediction_round_trips_do_not_grow_with_docs(fake_ops):
    model = build_model("endpoints_width")
    counts = []
    for n_docs in (2, 20):
        with fake_ops.measure() as measured:
            model.predict(docs([6] * n_docs))
        counts.append(measured)
    assert counts[0].round_trips == counts[1].round_trips
    assert counts[1].loops == 0 and counts[1].float64 == 0

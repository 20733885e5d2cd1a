"""The span representation layer: values by hand, finite-difference
gradients, the width guard; project_spans (the per-token projections of the
prediction fast path) against the span vectors it stands for."""
import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.layers.span_representation import build_span_representation, project_spans, span_projector
from spacy_imbalance.spans.candidates import enumerate_candidates

OPS = NumpyOps()


def repr_layer(kind, nI=3, nV=3, nE=2):
    layer = build_span_representation(kind, nE)
    layer.set_dim("nI", nI)
    layer.set_dim("nV", nV)
    layer.initialize()
    return layer


def test_representations_by_hand():
    X = numpy.arange(12, dtype="f").reshape(4, 3)
    starts, ends = numpy.array([0, 1], dtype="i"), numpy.array([2, 1], dtype="i")
    width = repr_layer("endpoints_width")
    E = width.get_param("E")
    out = width.predict((X, starts, ends))
    assert out.tolist() == numpy.hstack([X[[0, 1]], X[[2, 1]], E[[2, 0]]]).tolist()
    product = repr_layer("endpoints_product").predict((X, starts, ends))
    a, b = X[[0, 1]], X[[2, 1]]
    assert product.tolist() == numpy.hstack([a, b, a - b, a * b]).tolist()
    assert width.get_dim("nO") == 2 * 3 + 2


def test_mean_max_by_hand():
    """Spans of widths 3, 1 and 2: mean and max per feature over the span's
    tokens (the max from different tokens in different features)."""
    X = numpy.array([[1, 5, 0], [3, 2, 0], [2, 4, 9], [7, 1, 1]], dtype="f")
    starts, ends = numpy.array([0, 1, 2], dtype="i"), numpy.array([2, 1, 3], dtype="i")
    layer = repr_layer("endpoints_mean_max")
    E = layer.get_param("E")
    out = layer.predict((X, starts, ends))
    mean = [[2, 11 / 3, 3], [3, 2, 0], [4.5, 2.5, 5]]
    max_ = [[3, 5, 9], [3, 2, 0], [7, 4, 9]]
    expected = numpy.hstack([X[[0, 1, 2]], X[[2, 1, 3]], numpy.array(mean, dtype="f"), numpy.array(max_, dtype="f"), E[[2, 0, 1]]])
    numpy.testing.assert_allclose(out, expected, rtol=1e-6)
    assert layer.get_dim("nO") == 4 * 3 + 2


@pytest.mark.parametrize("kind", ["endpoints_width", "endpoints_product", "endpoints_mean_max"])
def test_representation_gradients_match_finite_differences(kind):
    rng = numpy.random.default_rng(0)
    layer = repr_layer(kind)
    X = rng.normal(size=(5, 3)).astype("float64")
    starts, ends = numpy.array([0, 1, 3, 0, 2], dtype="i"), numpy.array([2, 1, 4, 0, 4], dtype="i")
    layer.set_param("E", rng.normal(size=(3, 2)))
    out, backprop = layer((X, starts, ends), is_train=True)
    weights = rng.normal(size=out.shape)  # loss = sum(weights * out)
    d_X, _, _ = backprop(weights)
    eps = 1e-6
    numeric = numpy.zeros_like(X)
    for idx in numpy.ndindex(*X.shape):
        plus, minus = X.copy(), X.copy()
        plus[idx] += eps
        minus[idx] -= eps
        numeric[idx] = ((layer.predict((plus, starts, ends)) - layer.predict((minus, starts, ends))) * weights).sum() / (2 * eps)
    assert d_X == pytest.approx(numeric, abs=1e-6)
    if kind != "endpoints_product":
        E = layer.get_param("E").copy()
        numeric_E = numpy.zeros_like(E)
        for idx in numpy.ndindex(*E.shape):
            for sign in (1, -1):
                shifted = E.copy()
                shifted[idx] += sign * eps
                layer.set_param("E", shifted)
                numeric_E[idx] += sign * (layer.predict((X, starts, ends)) * weights).sum() / (2 * eps)
        layer.set_param("E", E)
        assert layer.get_grad("E") == pytest.approx(numeric_E, abs=1e-6)


def test_a_span_wider_than_the_width_embedding_is_an_error():
    layer = repr_layer("endpoints_width", nV=2)
    X = numpy.zeros((4, 3), dtype="f")
    with pytest.raises(ValueError, match="a span of width 3 exceeds the width embedding's 2"):
        layer.predict((X, numpy.array([0], dtype="i"), numpy.array([2], dtype="i")))


def random_candidates(lengths, max_width, nI=4, seed=0):
    tokens = numpy.random.default_rng(seed).normal(size=(sum(lengths), nI)).astype("f")
    return tokens, enumerate_candidates(OPS, lengths, max_width)


@pytest.mark.parametrize("kind", ["endpoints_width", "endpoints_product", "endpoints_mean_max"])
@pytest.mark.parametrize("max_width", [1, 3, 8])
def test_project_spans_is_the_affine_map_of_the_span_vectors(kind, max_width):
    """Per-token projections summed per span = W applied to the concatenated
    span vectors, for docs of several lengths (empty ones too)."""
    rng = numpy.random.default_rng(max_width)
    layer = repr_layer(kind, nI=4, nV=max_width, nE=3)
    layer.set_param("E", rng.normal(size=layer.get_param("E").shape).astype("f"))
    tokens, candidates = random_candidates([5, 0, 1, 12, 0], max_width)
    W = rng.normal(size=(7, layer.get_dim("nO"))).astype("f")
    b = rng.normal(size=(7,)).astype("f")
    expected = layer.predict((tokens, candidates.starts, candidates.ends)) @ W.T + b
    projected = project_spans(layer, tokens, candidates, W, b)
    assert projected.shape == (len(candidates), 7)
    numpy.testing.assert_allclose(projected, expected, rtol=1e-5, atol=1e-4)
    # any run of candidates gives the same rows
    projector = span_projector(layer, tokens, candidates, W, b)
    numpy.testing.assert_allclose(projector.rows(3, 11), expected[3:11], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", ["endpoints_width", "endpoints_product", "endpoints_mean_max"])
def test_project_spans_without_candidates(kind):
    layer = repr_layer(kind)
    tokens, candidates = numpy.zeros((0, 0), dtype="f"), enumerate_candidates(OPS, [0, 0], 3)
    W, b = numpy.ones((5, layer.get_dim("nO")), dtype="f"), numpy.zeros((5,), dtype="f")
    assert project_spans(layer, tokens, candidates, W, b).shape == (0, 5)


def test_project_spans_checks_widths_and_shapes_on_the_host():
    layer = repr_layer("endpoints_width", nI=4, nV=2)
    tokens, candidates = random_candidates([4], 3)
    W, b = numpy.ones((5, layer.get_dim("nO")), dtype="f"), numpy.zeros((5,), dtype="f")
    with pytest.raises(ValueError, match="a span of width 3 exceeds the width embedding's 2"):
        project_spans(layer, tokens, candidates, W, b)
    tokens, candidates = random_candidates([4], 2)
    with pytest.raises(ValueError, match="a projection of width 9 does not fit span vectors of width 10"):
        project_spans(layer, tokens, candidates, W[:, :9], b)

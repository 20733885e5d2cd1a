"""MoMLoss.v2: the paper's normalisation (Eq. 1 and 3), next to v1."""
import math

import numpy
import pytest
from thinc.api import Config, registry

from spacy_imbalance.losses import CrossEntropy, DiceLoss, FocalLoss, MoMLoss, MoMLossV2

from ._gradients import numeric_gradient


def _softmax(row):
    exps = [math.exp(z) for z in row]
    return [e / sum(exps) for e in exps]


# Two sentences: [O, B-X] and [O, O, I-X]; gold ids O=0, B-X=1, I-X=2.
LOGITS = numpy.array([[2.0, 1.0, 0.0], [0.5, -1.0, 1.5], [0.0, 3.0, -2.0], [1.0, 1.0, 1.0], [-1.0, 0.0, 2.0]])
GOLD = numpy.array([0, 1, 0, 0, 2], dtype="int32")
LENGTHS = [2, 3]


def _token_ce(logits, gold):
    return [-math.log(_softmax(row)[c]) for row, c in zip(logits.tolist(), gold.tolist())]


def test_mom_v2_hand_value():
    # L = lambda * mean CE over all 5 tokens + (1 - lambda) * sum of the O
    # tokens' CE / (N = 2 sentences * M = 4 padded tokens)
    lambda_, m = 0.3, 4
    ce = _token_ce(LOGITS, GOLD)
    expected = lambda_ * sum(ce) / 5 + (1 - lambda_) * (ce[0] + ce[2] + ce[3]) / (2 * m)
    loss = MoMLossV2(lambda_=lambda_, max_length=m)
    assert loss.compute_sequences(LOGITS, GOLD, LENGTHS)[1] == pytest.approx(expected, rel=1e-12)
    assert loss.compute(LOGITS, GOLD, n_sequences=2)[1] == pytest.approx(expected, rel=1e-12)


def test_mom_v2_is_v1_when_n_times_m_is_the_token_count():
    # v1 divides the O term by the 5 non-missing tokens; with N*M = 5 the two agree
    v1 = MoMLoss(lambda_=0.4)
    v2 = MoMLossV2(lambda_=0.4, max_length=5)
    g1, l1 = v1(LOGITS, GOLD)
    g2, l2 = v2.compute(LOGITS, GOLD, n_sequences=1)
    assert l2 == pytest.approx(l1, rel=1e-12)
    numpy.testing.assert_allclose(g2, g1, rtol=1e-12)


def test_mom_v2_o_term_weighs_less_with_a_longer_padding():
    # the paper's point: M = 128 against ~18-token tweets shrinks the O term
    v1 = MoMLoss(lambda_=0.0)
    v2 = MoMLossV2(lambda_=0.0, max_length=128)
    ratio = v2.compute_sequences(LOGITS, GOLD, LENGTHS)[1] / v1(LOGITS, GOLD)[1]
    assert ratio == pytest.approx(5 / (2 * 128), rel=1e-12)


@pytest.mark.parametrize("base", [CrossEntropy, lambda: FocalLoss(gamma=2.0, alpha=0.25)], ids=["ce", "focal"])
@pytest.mark.parametrize("lambda_", [0.0, 0.3, 1.0])
def test_mom_v2_gradient_matches_finite_differences(base, lambda_):
    loss = MoMLossV2(lambda_=lambda_, base=base(), max_length=6)
    logits = numpy.random.default_rng(3).normal(scale=2.0, size=(7, 4))
    truths = numpy.array([0, 3, -1, 0, 1, -1, 0], dtype="int32")
    lengths = [3, 4]
    grad, _ = loss.compute_sequences(logits, truths, lengths)
    numeric = numeric_gradient(lambda x: loss.compute_sequences(x, truths, lengths)[1], logits)
    assert numpy.abs(numeric).max() > 1e-4
    numpy.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    # missing tokens get nothing
    assert numpy.all(grad[truths < 0] == 0)


def test_mom_v2_over_dice_is_v1():
    # dice is a ratio: it ignores every normalizer, so v2 changes nothing
    v1 = MoMLoss(lambda_=0.3, base=DiceLoss())
    v2 = MoMLossV2(lambda_=0.3, base=DiceLoss(), max_length=128)
    assert v2.compute_sequences(LOGITS, GOLD, LENGTHS)[1] == pytest.approx(v1(LOGITS, GOLD)[1], rel=1e-12)


def test_mom_v2_needs_the_number_of_sentences():
    loss = MoMLossV2()
    with pytest.raises(ValueError, match="n_sequences"):
        loss(LOGITS, GOLD)
    with pytest.raises(ValueError, match="n_sequences"):
        loss.compute(LOGITS, GOLD, n_sequences=0)
    with pytest.raises(ValueError, match="lengths sum to 4"):
        loss.compute_sequences(LOGITS, GOLD, [2, 2])
    assert loss.per_sequence and not MoMLoss().per_sequence


def test_mom_v1_ignores_the_lengths():
    loss = MoMLoss(lambda_=0.3)
    assert loss.compute_sequences(LOGITS, GOLD, LENGTHS)[1] == loss(LOGITS, GOLD)[1]


@pytest.mark.parametrize("max_length", [0, -3, 1.5, True, "128"])
def test_mom_v2_validates_max_length(max_length):
    with pytest.raises(ValueError, match="max_length"):
        MoMLossV2(max_length=max_length)


def test_mom_v2_registered():
    config = Config().from_str(
        """
        [loss]
        @losses = "spacy-imbalance.MoMLoss.v2"
        lambda_ = 0.2
        max_length = 64

        [loss.base]
        @losses = "spacy-imbalance.FocalLoss.v1"
        gamma = 2.0
        """
    )
    loss = registry.resolve(config)["loss"]
    assert isinstance(loss, MoMLossV2) and loss.lambda_ == 0.2 and loss.max_length == 64
    assert isinstance(loss.base, FocalLoss)

"""Token losses: gradients against finite differences, values against hand
computations, missing labels, numerical stability, config validation and
the registry."""
import math
import pickle

import numpy
import pytest
from thinc.api import Config, registry

from spacy_imbalance.losses import (
    AUCMarginLoss,
    CrossEntropy,
    DiceLoss,
    FocalLoss,
    MoMLoss,
    TokenLoss,
    WeightedCrossEntropy,
)
from spacy_imbalance.losses.cross_entropy import class_weights
from spacy_imbalance.losses.dice import MIN_GAMMA

from ._gradients import numeric_gradient

COUNTS = [40, 25, 20, 10, 5]  # 5 classes, class 0 (O) the majority


def _wce(scheme, beta=1.0, normalize=True):
    loss = WeightedCrossEntropy(scheme=scheme, beta=beta, normalize=normalize)
    loss.initialize(COUNTS)
    return loss


def _mom(lambda_, base):
    return MoMLoss(lambda_=lambda_, base=base)


# Built fresh per test: name -> zero-argument constructor.
LOSSES = {
    "ce": lambda: CrossEntropy(),
    "ce-sum": lambda: CrossEntropy(normalize=False),
    "wce-inv": lambda: _wce("inverse_frequency"),
    "wce-log": lambda: _wce("log", beta=1.5),
    "wce-log-sum": lambda: _wce("log", normalize=False),
    **{
        f"focal-g{gamma}-a{alpha}": (lambda gamma=gamma, alpha=alpha: FocalLoss(gamma=gamma, alpha=alpha))
        for gamma in (0.0, 0.5, 2.0)
        for alpha in (None, 0.25)
    },
    "dice": lambda: DiceLoss(),
    "dice-a0": lambda: DiceLoss(alpha=0.0, gamma=0.5),
    "dice-a0.7": lambda: DiceLoss(alpha=0.7, gamma=2.0),
    **{
        f"mom{lambda_}-{base}": (lambda lambda_=lambda_, make=make: _mom(lambda_, make()))
        for lambda_ in (0.0, 0.3, 1.0)
        for base, make in {
            "ce": CrossEntropy,
            "focal": lambda: FocalLoss(gamma=2.0, alpha=0.25),
            "wce": lambda: _wce("log", beta=2.0),
            "dice": DiceLoss,
        }.items()
    },
}
ALL = sorted(LOSSES)
DECOMPOSABLE = [name for name in ALL if not name.startswith("dice") and not name.endswith("-dice")]


def _batch(seed=0):
    """7 tokens x 5 classes of float64 logits; two tokens missing, two O."""
    logits = numpy.random.default_rng(seed).normal(scale=2.0, size=(7, 5))
    return logits, numpy.array([0, 3, -1, 0, 1, -1, 4], dtype="int32")


def _numeric_grad(loss, logits, truths):
    return numeric_gradient(lambda x: loss.get_loss(x, truths), logits)


def _softmax_row(row):
    exps = [math.exp(z) for z in row]
    return [e / sum(exps) for e in exps]


# A tiny case for hand computations: 3 tokens, 3 classes, gold O, B-X, I-X.
TINY_LOGITS = numpy.array([[2.0, 1.0, 0.0], [0.5, -1.0, 1.5], [0.0, 3.0, -2.0]])
TINY_GOLD = numpy.array([0, 2, 1])
TINY_P = [_softmax_row(row) for row in TINY_LOGITS.tolist()]
TINY_P_GOLD = [TINY_P[i][c] for i, c in enumerate(TINY_GOLD.tolist())]


@pytest.mark.parametrize("name", ALL)
def test_losses_gradient_matches_finite_differences(name):
    loss = LOSSES[name]()
    logits, truths = _batch()
    grad, value = loss(logits, truths)
    assert grad.shape == logits.shape and grad.dtype == logits.dtype
    assert isinstance(value, float)
    numeric = _numeric_grad(loss, logits, truths)
    assert numpy.abs(numeric).max() > 1e-4  # the check compares something
    numpy.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_losses_cross_entropy_hand_value():
    expected = -sum(math.log(p) for p in TINY_P_GOLD) / 3
    assert CrossEntropy()(TINY_LOGITS, TINY_GOLD)[1] == pytest.approx(expected, rel=1e-12)
    assert CrossEntropy(normalize=False).get_loss(TINY_LOGITS, TINY_GOLD) == pytest.approx(3 * expected, rel=1e-12)
    # Gradient of token 0: p - onehot(0).
    p0 = TINY_P[0]
    grad = CrossEntropy().get_grad(TINY_LOGITS, TINY_GOLD)
    numpy.testing.assert_allclose(grad[0], [(p0[0] - 1) / 3, p0[1] / 3, p0[2] / 3], rtol=1e-12)


@pytest.mark.parametrize(
    "scheme,beta,expected",
    [
        # s = 100, K = 4: w_k = 100 / (4 s_k)
        ("inverse_frequency", 1.0, [100 / 360, 100 / 24, 100 / 12, 100 / 4]),
        # w_k = log10((100 - s_k) / s_k + beta)
        ("log", 1.0, [math.log10(10 / 90 + 1), math.log10(94 / 6 + 1), math.log10(97 / 3 + 1), 2.0]),
        ("log", 3.0, [math.log10(10 / 90 + 3), math.log10(94 / 6 + 3), math.log10(97 / 3 + 3), math.log10(102)]),
    ],
)
def test_losses_wce_weights_by_hand(scheme, beta, expected):
    loss = WeightedCrossEntropy(scheme=scheme, beta=beta)
    loss.initialize([90, 6, 3, 1])
    assert loss.weights == pytest.approx(expected, rel=1e-12)
    assert loss.class_counts == [90, 6, 3, 1]


def test_losses_wce_inverse_frequency_mean_weight_is_one():
    counts = [90, 6, 3, 1]
    weights = class_weights(counts, scheme="inverse_frequency")
    assert sum(w * c for w, c in zip(weights, counts)) / sum(counts) == pytest.approx(1.0)


@pytest.mark.parametrize("scheme", ["inverse_frequency", "log"])
def test_losses_wce_unseen_class_weighs_as_seen_once(scheme):
    weights = class_weights([90, 6, 0, 1], scheme=scheme)
    assert weights[2] == weights[3] and math.isfinite(weights[2])


def test_losses_wce_hand_value():
    counts = [4, 1, 1]  # s = 6, K = 3
    weights = [6 / 12, 6 / 3, 6 / 3]
    loss = WeightedCrossEntropy()
    loss.initialize(counts)
    expected = -sum(weights[c] * math.log(p) for c, p in zip(TINY_GOLD.tolist(), TINY_P_GOLD)) / 3
    assert loss.get_loss(TINY_LOGITS, TINY_GOLD) == pytest.approx(expected, rel=1e-12)


def test_losses_wce_needs_initialize():
    loss = WeightedCrossEntropy()
    assert loss.needs_class_counts and loss.class_counts is None
    with pytest.raises(RuntimeError, match="initialize"):
        loss(TINY_LOGITS, TINY_GOLD)


def test_losses_wce_bad_counts():
    loss = WeightedCrossEntropy()
    with pytest.raises(ValueError, match="all zero"):
        loss.initialize([0, 0, 0])
    with pytest.raises(ValueError, match=">= 0"):
        loss.initialize([3, -1, 2])
    loss.initialize([3, 1])
    with pytest.raises(ValueError, match="2 class counts"):
        loss(TINY_LOGITS, TINY_GOLD)


@pytest.mark.parametrize("gamma", [0.5, 2.0])
@pytest.mark.parametrize("alpha", [None, 0.25])
def test_losses_focal_hand_value(gamma, alpha):
    def a(c):
        return 1.0 if alpha is None else (1 - alpha if c == 0 else alpha)

    terms = [-a(c) * (1 - p) ** gamma * math.log(p) for c, p in zip(TINY_GOLD.tolist(), TINY_P_GOLD)]
    loss = FocalLoss(gamma=gamma, alpha=alpha)
    assert loss.get_loss(TINY_LOGITS, TINY_GOLD) == pytest.approx(sum(terms) / 3, rel=1e-12)


def test_losses_focal_gamma_zero_is_cross_entropy_exactly():
    logits, truths = _batch(seed=3)
    focal_grad, focal_loss = FocalLoss(gamma=0.0)(logits, truths)
    ce_grad, ce_loss = CrossEntropy()(logits, truths)
    assert focal_loss == ce_loss
    assert numpy.array_equal(focal_grad, ce_grad)


@pytest.mark.parametrize("alpha,gamma", [(0.0, 1.0), (0.1, 1.0), (0.5, 0.01)])
def test_losses_dice_hand_value(alpha, gamma):
    n_classes = 3
    dice = []
    for k in range(n_classes):
        q = [(1 - p[k]) ** alpha * p[k] for p in TINY_P]
        y = [1.0 if c == k else 0.0 for c in TINY_GOLD.tolist()]
        dice.append(1 - (2 * sum(qi * yi for qi, yi in zip(q, y)) + gamma) / (sum(q) + sum(y) + gamma))
    loss = DiceLoss(alpha=alpha, gamma=gamma)
    assert loss.get_loss(TINY_LOGITS, TINY_GOLD) == pytest.approx(sum(dice) / n_classes, rel=1e-12)
    # The normalizer is ignored: dice is a ratio.
    assert loss.compute(TINY_LOGITS, TINY_GOLD, normalizer=17.0)[1] == loss.get_loss(TINY_LOGITS, TINY_GOLD)


def test_losses_mom_hand_value():
    # Eq. 1-2 over CE, M = 3 tokens: O tokens are 0 (only); both terms / M.
    lambda_ = 0.3
    ce_terms = [-math.log(p) for p in TINY_P_GOLD]
    full = sum(ce_terms) / 3
    mom = ce_terms[0] / 3
    loss = MoMLoss(lambda_=lambda_, base=CrossEntropy())
    assert loss.get_loss(TINY_LOGITS, TINY_GOLD) == pytest.approx(lambda_ * full + (1 - lambda_) * mom, rel=1e-12)
    # The default base is cross-entropy.
    assert MoMLoss(lambda_=lambda_).get_loss(TINY_LOGITS, TINY_GOLD) == loss.get_loss(TINY_LOGITS, TINY_GOLD)


# Constructors of the base losses MoM wraps (fresh ones per test): the MoM
# properties below must hold over each of them.
MOM_BASES = pytest.mark.parametrize(
    "base",
    [CrossEntropy, lambda: FocalLoss(gamma=2.0, alpha=0.25), lambda: _wce("inverse_frequency"), DiceLoss],
    ids=["ce", "focal", "wce", "dice"],
)


@MOM_BASES
def test_losses_mom_lambda_one_is_base_exactly(base):
    logits, truths = _batch(seed=5)
    base_grad, base_loss = base()(logits, truths)
    mom_grad, mom_loss = MoMLoss(lambda_=1.0, base=base())(logits, truths)
    assert mom_loss == base_loss
    assert numpy.array_equal(mom_grad, base_grad)


@MOM_BASES
def test_losses_mom_term_only_touches_majority_rows(base):
    logits, truths = _batch(seed=6)
    grad, value = MoMLoss(lambda_=0.0, base=base())(logits, truths)
    is_majority = truths == 0
    assert value > 0
    assert numpy.all(grad[~is_majority] == 0)
    assert numpy.abs(grad[is_majority]).min(axis=1).max() > 0


def test_losses_mom_term_uses_full_batch_normalizer():
    # Over CE, the lambda_=0 term is the O tokens' CE summed and divided by all
    # 5 non-missing tokens, not by the 2 O tokens.
    logits, truths = _batch(seed=7)
    o_only = numpy.where(truths == 0, truths, -1)
    o_sum = CrossEntropy(normalize=False).get_loss(logits, o_only)
    assert MoMLoss(lambda_=0.0).get_loss(logits, truths) == pytest.approx(o_sum / 5, rel=1e-12)


def test_losses_mom_delegates_class_counts():
    loss = MoMLoss(lambda_=0.2, base=WeightedCrossEntropy(scheme="log"))
    assert loss.needs_class_counts and loss.class_counts is None
    loss.initialize(COUNTS)
    assert loss.class_counts == COUNTS
    assert loss.base.weights is not None
    assert not MoMLoss().needs_class_counts and MoMLoss().class_counts is None


@pytest.mark.parametrize("name", ALL)
def test_losses_missing_labels_add_nothing(name):
    loss = LOSSES[name]()
    logits, truths = _batch(seed=1)
    keep = truths >= 0
    grad, value = loss(logits, truths)
    kept_grad, kept_value = loss(logits[keep], truths[keep])
    assert value == pytest.approx(kept_value, rel=1e-12)
    assert numpy.all(grad[~keep] == 0)
    numpy.testing.assert_allclose(grad[keep], kept_grad, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("n_tokens", [0, 3])
def test_losses_all_missing_is_zero(name, n_tokens):
    logits = numpy.ones((n_tokens, 5))
    grad, value = LOSSES[name]()(logits, numpy.full(n_tokens, -1, dtype="int32"))
    assert value == 0.0
    assert grad.shape == logits.shape and not grad.any()


@pytest.mark.parametrize("name", DECOMPOSABLE)
def test_losses_perfect_prediction_is_near_zero(name):
    logits, truths = _batch()
    truths = numpy.where(truths < 0, 2, truths)
    perfect = numpy.zeros_like(logits)
    perfect[numpy.arange(len(truths)), truths] = 30.0
    # Per token about 4 exp(-30) ~ 4e-13 at most, times a weight of at most ~8.
    assert 0 <= LOSSES[name]().get_loss(perfect, truths) < 1e-10


def test_losses_dice_perfect_prediction():
    logits, truths = _batch()
    truths = numpy.where(truths < 0, 2, truths)
    perfect = numpy.zeros_like(logits)
    perfect[numpy.arange(len(truths)), truths] = 30.0
    # Plain dice (alpha=0) with gamma small next to the gold counts (1-3 per
    # class) is near 0 ...
    assert DiceLoss(alpha=0.0, gamma=1e-3).get_loss(perfect, truths) < 1e-6
    # ... while the self-adjusting factor (1 - p)^alpha shrinks confident
    # probabilities, ((4e-13)^0.1 ~ 0.06), so the default keeps a large loss.
    assert DiceLoss().get_loss(perfect, truths) > 0.5


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("scale", [1e4, 50.0])
def test_losses_stable_for_saturated_float32_logits(name, scale):
    logits = numpy.array(
        [[scale, -scale, 0, 0, 0], [-scale, scale, 0, 0, 0], [0, 0, scale, -scale, 0], [scale, 0, 0, 0, -scale]],
        dtype="float32",
    )
    truths = numpy.array([0, 0, 2, 4], dtype="int32")  # two confident right, two confident wrong
    grad, value = LOSSES[name]()(logits, truths)
    assert grad.dtype == numpy.float32
    assert math.isfinite(value) and numpy.isfinite(grad).all()


def test_losses_focal_gamma_below_one_stays_finite_at_certainty():
    # 1 - p_c is exactly 0 here, and (1 - p_c)^(gamma - 1) would be inf.
    logits = numpy.array([[1e4, 0.0, 0.0], [0.0, 1e4, 0.0]], dtype="float32")
    grad, value = FocalLoss(gamma=0.5)(logits, numpy.array([0, 1]))
    assert value == 0.0 and numpy.isfinite(grad).all() and not grad.any()


@pytest.mark.parametrize("loss", [CrossEntropy(), DiceLoss(), MoMLoss()], ids=["ce", "dice", "mom"])
def test_losses_validate_inputs(loss):
    logits = numpy.zeros((3, 4))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2,\)"):
        loss(logits, numpy.array([0, 1]))
    with pytest.raises(ValueError, match="out of range"):
        loss(logits, numpy.array([0, 4, 1]))
    with pytest.raises(ValueError, match="integers"):
        loss(logits, numpy.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="2-dimensional"):
        loss(numpy.zeros(3), numpy.array([0, 1, 2]))


NAMES = {
    "spacy-imbalance.CrossEntropy.v1": CrossEntropy,
    "spacy-imbalance.WeightedCrossEntropy.v1": WeightedCrossEntropy,
    "spacy-imbalance.FocalLoss.v1": FocalLoss,
    "spacy-imbalance.DiceLoss.v1": DiceLoss,
    "spacy-imbalance.MoMLoss.v1": MoMLoss,
}


def _resolve(block):
    return registry.resolve(Config().from_str(block))["loss"]


@pytest.mark.parametrize("name,cls", NAMES.items(), ids=list(NAMES))
def test_losses_registry_resolves(name, cls):
    loss = _resolve(f'[loss]\n@losses = "{name}"\n')
    assert type(loss) is cls and isinstance(loss, TokenLoss)


def test_losses_registry_nested_base():
    loss = _resolve(
        """
        [loss]
        @losses = "spacy-imbalance.MoMLoss.v1"
        lambda_ = 0.2

        [loss.base]
        @losses = "spacy-imbalance.FocalLoss.v1"
        gamma = 3.0
        alpha = 0.25
        """
    )
    assert isinstance(loss, MoMLoss) and loss.lambda_ == 0.2
    assert isinstance(loss.base, FocalLoss) and (loss.base.gamma, loss.base.alpha) == (3.0, 0.25)
    assert isinstance(MoMLoss().base, CrossEntropy)


@pytest.mark.parametrize(
    "block,setting",
    [
        ('@losses = "spacy-imbalance.MoMLoss.v1"\nlambda_ = 1.5', "lambda_"),
        ('@losses = "spacy-imbalance.FocalLoss.v1"\ngamma = -1', "gamma"),
        ('@losses = "spacy-imbalance.FocalLoss.v1"\nalpha = 1.5', "alpha"),
        ('@losses = "spacy-imbalance.WeightedCrossEntropy.v1"\nscheme = "bogus"', "scheme"),
        ('@losses = "spacy-imbalance.WeightedCrossEntropy.v1"\nbeta = 0.5', "beta"),
        ('@losses = "spacy-imbalance.DiceLoss.v1"\ngamma = 0', "gamma"),
        ('@losses = "spacy-imbalance.DiceLoss.v1"\nalpha = -0.1', "alpha"),
    ],
)
def test_losses_bad_settings_fail_at_config_resolution(block, setting):
    with pytest.raises(ValueError) as excinfo:
        _resolve(f"[loss]\n{block}\n")
    assert setting in str(excinfo.value)


INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    "cls,setting,value",
    [
        (FocalLoss, "gamma", INF),
        (FocalLoss, "gamma", NAN),
        (FocalLoss, "alpha", NAN),
        (DiceLoss, "alpha", INF),
        (DiceLoss, "gamma", INF),
        (DiceLoss, "gamma", NAN),
        (DiceLoss, "gamma", MIN_GAMMA / 10),
        (WeightedCrossEntropy, "beta", INF),
        (MoMLoss, "lambda_", NAN),
        (AUCMarginLoss, "margin", INF),
        (AUCMarginLoss, "margin", NAN),
        (AUCMarginLoss, "alpha_lr", NAN),
    ],
)
def test_losses_non_finite_settings_are_rejected(cls, setting, value):
    """inf and nan used to pass the one-sided checks (gamma >= 0, margin > 0)
    and turned the first loss into nan; the message names setting and value."""
    with pytest.raises(ValueError, match=rf"{setting} must be .*, got {setting}={value}"):
        cls(**{setting: value})


@pytest.mark.parametrize(
    "block,setting",
    [
        ('@losses = "spacy-imbalance.FocalLoss.v1"\ngamma = 1e400', "gamma"),
        ('@losses = "spacy-imbalance.DiceLoss.v1"\nalpha = 1e400', "alpha"),
        ('@losses = "spacy-imbalance.AUCMarginLoss.v1"\nmargin = 1e400', "margin"),
    ],
)
def test_losses_infinite_settings_fail_at_config_resolution(block, setting):
    with pytest.raises(ValueError, match=f"{setting} must be .* finite"):
        _resolve(f"[loss]\n{block}\n")


# --- settings beyond float32's range (issue 31, L1) ---------------------------


def _extreme_logits():
    """float32 logits from near-uniform to saturated (a gap of 2000), with
    every class gold somewhere."""
    rng = numpy.random.default_rng(0)
    blocks = [(rng.normal(size=(40, 5)) * scale).astype("float32") for scale in (0.1, 1.0, 10.0, 100.0, 1000.0)]
    saturated = numpy.zeros((5, 5), dtype="float32")
    saturated[:, 0] = 200.0
    logits = numpy.concatenate(blocks + [saturated])
    return logits, numpy.arange(len(logits)) % 5


@pytest.mark.parametrize(
    "cls,setting,value,message",
    [
        (FocalLoss, "gamma", 1e300, r"FocalLoss: gamma must be in \[0, 1e\+38\] .*float32.*got gamma=1e\+300"),
        (FocalLoss, "gamma", 1e39, r"FocalLoss: gamma must be in \[0, 1e\+38\]"),
        (DiceLoss, "alpha", 1e300, r"DiceLoss: alpha must be in \[0, 1e\+38\] .*float32.*got alpha=1e\+300"),
        (DiceLoss, "gamma", 1e39, r"DiceLoss: gamma must be in \[1e-37, 1e\+38\]"),
        (AUCMarginLoss, "margin", 1e38, r"AUCMarginLoss: margin must be in \(0, 1e\+18\] .*float32.*got margin=1e\+38"),
    ],
)
def test_losses_settings_beyond_float32_are_rejected(cls, setting, value, message):
    """They passed and gave non-finite gradients (focal gamma, dice alpha)
    or an inf loss (AUC margin) at the first batch."""
    with pytest.raises(ValueError, match=message):
        cls(**{setting: value})


@pytest.mark.parametrize(
    "make",
    [lambda: FocalLoss(gamma=1e38), lambda: DiceLoss(alpha=1e38), lambda: DiceLoss(gamma=1e38), lambda: DiceLoss(alpha=1e38, gamma=MIN_GAMMA)],
    ids=["focal-gamma", "dice-alpha", "dice-gamma", "dice-alpha-tiny-gamma"],
)
def test_losses_settings_at_the_float32_bound_stay_finite(make):
    logits, gold = _extreme_logits()
    with numpy.errstate(all="ignore"):
        grad, loss = make().compute(logits, gold)
    assert numpy.isfinite(grad).all() and math.isfinite(loss)


def test_losses_settings_must_be_numbers():
    with pytest.raises(TypeError, match="gamma must be a number, got gamma='2'"):
        FocalLoss(gamma="2")  # type: ignore[arg-type]


def test_losses_dice_tiny_gamma_float32_gradient_is_finite_and_right():
    """Row 0 predicts class 2, absent from the gold, with 1 - p exactly 0 in
    float32: its d loss / d q is 1 / (gamma K) and (1 - p)^(alpha - 1) is
    huge, and their product used to overflow to inf and meet p = 0 (nan)."""
    logits = numpy.array([[0.0, 0.0, 1000.0], [0.0, 40.0, -30.0], [2.0, 1.0, -30.0], [1.5, -1.0, -30.0]])
    truths = numpy.array([0, 1, 0, 1])
    loss = DiceLoss(alpha=0.1, gamma=1e-8)
    grad64, value64 = loss(logits, truths)
    numpy.testing.assert_allclose(grad64, _numeric_grad(loss, logits, truths), rtol=1e-5, atol=1e-9)
    for gamma in (1e-8, MIN_GAMMA):
        grad32, value32 = DiceLoss(alpha=0.1, gamma=gamma)(logits.astype("float32"), truths)
        assert math.isfinite(value32) and numpy.isfinite(grad32).all()
    grad32, value32 = loss(logits.astype("float32"), truths)
    assert value32 == pytest.approx(value64, rel=1e-6)
    numpy.testing.assert_allclose(grad32, grad64, rtol=1e-4, atol=numpy.finfo("float32").tiny)


def test_losses_dice_float32_gradients_stay_finite_down_to_min_gamma():
    rng = numpy.random.default_rng(0)
    for _ in range(300):
        n_tokens, n_classes = rng.integers(1, 6), rng.integers(2, 7)
        logits = (rng.normal(size=(n_tokens, n_classes)) * 10 ** rng.uniform(0, 4)).astype("float32")
        truths = rng.integers(-1, n_classes, size=n_tokens).astype("int32")
        for alpha in (0.0, 0.01, 0.1, 0.7, 2.0):
            grad, value = DiceLoss(alpha=alpha, gamma=MIN_GAMMA)(logits, truths)
            assert math.isfinite(value) and numpy.isfinite(grad).all(), (alpha, logits, truths)


def test_losses_bad_base_fails_at_config_resolution():
    with pytest.raises(ValueError, match="lambda_"):
        _resolve(
            '[loss]\n@losses = "spacy-imbalance.MoMLoss.v1"\nlambda_ = -0.1\n'
            '[loss.base]\n@losses = "spacy-imbalance.DiceLoss.v1"\n'
        )
    with pytest.raises(TypeError, match="base"):
        MoMLoss(base=object())  # type: ignore[arg-type]


def test_losses_wce_unknown_scheme_lists_valid_ones():
    with pytest.raises(ValueError, match="inverse_frequency.*log"):
        WeightedCrossEntropy(scheme="bogus")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["ce", "wce-log", "focal-g2.0-a0.25", "dice", "mom0.3-wce", "mom0.3-focal"])
def test_losses_pickle_round_trip(name):
    loss = LOSSES[name]()
    copy = pickle.loads(pickle.dumps(loss))
    logits, truths = _batch(seed=2)
    grad, value = loss(logits, truths)
    copy_grad, copy_value = copy(logits, truths)
    assert copy_value == value and numpy.array_equal(copy_grad, grad)
    assert copy.class_counts == loss.class_counts


def test_losses_thinc_methods_agree():
    loss = FocalLoss(gamma=2.0, alpha=0.25)
    logits, truths = _batch(seed=4)
    grad, value = loss(logits, truths)
    assert loss.get_loss(logits, truths) == value
    assert numpy.array_equal(loss.get_grad(logits, truths), grad)
    assert loss.initialize([1, 2, 3]) is None and loss.class_counts is None and not loss.needs_class_counts


@pytest.mark.parametrize(
    "name",
    ["ce", "wce-log", "focal-g0.5-aNone", "focal-g2.0-a0.25", "dice", "dice-a0.7", "mom0.3-dice", "mom0.3-focal"],
)
def test_losses_float32_matches_float64_when_confident(name):
    # Logit gaps of 20-40 round p of the top class to 1.0 in float32, yet
    # 1 - p (~1e-9 to 1e-17) must come out right: it is the gold entry of
    # p - onehot, and in dice (1 - p)^(alpha - 1) would explode without it.
    # Relative tolerance on every entry down to float32's smallest normal number.
    logits = numpy.array(
        [
            [20.0, 0.0, 1.0, -3.0, 0.0],
            [0.0, 30.0, 2.0, 0.0, -1.0],
            [1.0, 0.0, 0.0, 40.0, 0.0],
            [0.5, 1.0, 0.0, 2.0, 0.0],
            [0.0, 25.0, 0.0, 0.0, 3.0],
        ]
    )
    truths = numpy.array([0, 1, 3, 2, 4])
    grad64, value64 = LOSSES[name]()(logits, truths)
    grad32, value32 = LOSSES[name]()(logits.astype("float32"), truths)
    assert value32 == pytest.approx(value64, rel=1e-5)
    numpy.testing.assert_allclose(grad32, grad64, rtol=1e-3, atol=numpy.finfo("float32").tiny)


def test_losses_mom_majority_class_out_of_range():
    with pytest.raises(ValueError, match="majority_class"):
        MoMLoss(majority_class=3)(TINY_LOGITS, TINY_GOLD)
    with pytest.raises(ValueError, match="majority_class"):
        MoMLoss(majority_class=-1)

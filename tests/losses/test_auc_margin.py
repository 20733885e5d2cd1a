"""AUC margin loss: values against the formulas by hand, gradients against
finite differences, missing entries, one-sided and empty tasks, the alpha
ascent, convergence of a and b, validation and pickling."""
import math
import pickle
import warnings

import numpy
import pytest
from thinc.api import Config, registry

from spacy_imbalance.losses import AUCMarginLoss, AUCMarginResult

from ._gradients import numeric_gradient

FORMS = ["conditional", "libauc", "libauc-imratio"]


def _loss(form, **kwargs):
    if form == "libauc-imratio":
        return AUCMarginLoss(form="libauc", imratio=0.3, **kwargs)
    return AUCMarginLoss(form=form, **kwargs)


# 5 tokens x 2 tasks. Task 0: positives 0.9, 0.6; negatives 0.3, 0.2; row 4
# missing. Task 1: positive 0.7; negatives 0.2, 0.1, 0.4; row 3 missing.
H = numpy.array([[0.9, 0.2], [0.6, 0.7], [0.3, 0.1], [0.2, 0.8], [0.5, 0.4]])
TRUTHS = numpy.array([[1, 0], [1, 1], [0, 0], [0, -1], [-1, 0]], dtype="int32")
A = numpy.array([0.5, 0.3])
B = numpy.array([0.1, 0.4])
ALPHA = numpy.array([0.2, 0.7])


def test_auc_margin_conditional_value_by_hand():
    # L = mean_pos (h-a)^2 + mean_neg (h-b)^2 + 2 alpha (m - mean_pos h + mean_neg h) - alpha^2
    task0 = (0.4**2 + 0.1**2) / 2 + (0.2**2 + 0.1**2) / 2 + 2 * 0.2 * (1 - 0.75 + 0.25) - 0.2**2
    mean_neg1 = (0.2 + 0.1 + 0.4) / 3
    task1 = 0.4**2 + ((-0.2) ** 2 + (-0.3) ** 2 + 0.0**2) / 3 + 2 * 0.7 * (1 - 0.7 + mean_neg1) - 0.7**2
    assert task0 == pytest.approx(0.27)
    assert task1 == pytest.approx(0.46)
    result = AUCMarginLoss().compute(H, TRUTHS, A, B, ALPHA)
    assert isinstance(result, AUCMarginResult)
    assert result.loss == pytest.approx(task0 + task1)
    numpy.testing.assert_allclose(result.task_losses, [task0, task1])
    # task_weights weight the sum; task_losses stay unweighted.
    weighted = AUCMarginLoss().compute(H, TRUTHS, A, B, ALPHA, task_weights=numpy.array([1.0, 100.0]))
    assert weighted.loss == pytest.approx(task0 + 100 * task1)
    numpy.testing.assert_allclose(weighted.task_losses, [task0, task1])


def test_auc_margin_libauc_value_by_hand():
    # p = P / T over the T = 4 non-missing tokens of each task: 0.5 and 0.25.
    # L = (1-p) mean_T[(h-a)^2 1pos] + p mean_T[(h-b)^2 1neg]
    #     + 2 alpha (p(1-p) m + mean_T[p h 1neg - (1-p) h 1pos]) - p(1-p) alpha^2
    p0, p1 = 0.5, 0.25
    task0 = (
        (1 - p0) * (0.4**2 + 0.1**2) / 4
        + p0 * (0.2**2 + 0.1**2) / 4
        + 2 * 0.2 * (p0 * (1 - p0) + (p0 * (0.3 + 0.2) - (1 - p0) * (0.9 + 0.6)) / 4)
        - p0 * (1 - p0) * 0.2**2
    )
    task1 = (
        (1 - p1) * 0.4**2 / 4
        + p1 * ((-0.2) ** 2 + (-0.3) ** 2 + 0.0**2) / 4
        + 2 * 0.7 * (p1 * (1 - p1) + (p1 * (0.2 + 0.1 + 0.4) - (1 - p1) * 0.7) / 4)
        - p1 * (1 - p1) * 0.7**2
    )
    assert task0 == pytest.approx(0.0675)
    assert task1 == pytest.approx(0.08625)
    result = AUCMarginLoss(form="libauc").compute(H, TRUTHS, A, B, ALPHA)
    assert result.loss == pytest.approx(task0 + task1)
    numpy.testing.assert_allclose(result.task_losses, [task0, task1])
    # A fixed imratio replaces the batch ratio of every task.
    p = 0.1
    fixed0 = (
        (1 - p) * (0.4**2 + 0.1**2) / 4
        + p * (0.2**2 + 0.1**2) / 4
        + 2 * 0.2 * (p * (1 - p) + (p * (0.3 + 0.2) - (1 - p) * (0.9 + 0.6)) / 4)
        - p * (1 - p) * 0.2**2
    )
    fixed = AUCMarginLoss(form="libauc", imratio=p, margin=1.0).compute(H, TRUTHS, A, B, ALPHA)
    assert fixed.task_losses[0] == pytest.approx(fixed0)


def _random_case(seed, n_tokens=9, n_tasks=3):
    rng = numpy.random.default_rng(seed)
    h = rng.uniform(size=(n_tokens, n_tasks))
    truths = rng.choice([-1, 0, 0, 1], size=(n_tokens, n_tasks)).astype("int32")
    truths[:3, :] = [[1, 0, 0], [0, 1, -1], [-1, -1, 0]]  # both sides in tasks 0, 1
    truths[:, 2] = numpy.where(truths[:, 2] == 1, 0, truths[:, 2])  # task 2: no positives
    a, b, alpha = rng.uniform(size=n_tasks), rng.uniform(size=n_tasks), rng.uniform(size=n_tasks)
    return h, truths, a, b, alpha


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_auc_margin_gradients_match_finite_differences(form, seed):
    loss = _loss(form, margin=0.7)
    h, truths, a, b, alpha = _random_case(seed)
    weights = numpy.array([1.0, 2.5, 0.3])
    result = loss.compute(h, truths, a, b, alpha, task_weights=weights)

    def value(h=h, a=a, b=b, alpha=alpha):
        return loss.compute(h, truths, a, b, alpha, task_weights=weights).loss

    numpy.testing.assert_allclose(result.d_h, numeric_gradient(lambda x: value(h=x), h), atol=1e-7)
    numpy.testing.assert_allclose(result.d_a, numeric_gradient(lambda x: value(a=x), a), atol=1e-7)
    numpy.testing.assert_allclose(result.d_b, numeric_gradient(lambda x: value(b=x), b), atol=1e-7)
    # d_alpha is per task and unweighted: the weighted loss's gradient divided by the weights.
    d_alpha = numeric_gradient(lambda x: value(alpha=x), alpha)
    numpy.testing.assert_allclose(result.d_alpha * weights, d_alpha, atol=1e-7)
    unweighted = loss.compute(h, truths, a, b, alpha)
    numpy.testing.assert_allclose(unweighted.d_alpha, result.d_alpha)
    numpy.testing.assert_allclose(unweighted.d_h * weights, result.d_h)
    assert result.loss == pytest.approx(float((weights * unweighted.task_losses).sum()))
    assert result.d_h.dtype == h.dtype and result.d_a.dtype == a.dtype


@pytest.mark.parametrize("form", FORMS)
def test_auc_margin_missing_rows_change_nothing(form):
    loss = _loss(form)
    h, truths, a, b, alpha = _random_case(3)
    base = loss.compute(h, truths, a, b, alpha)
    extra_h = numpy.array([[numpy.nan, 0.9, 1e30], [0.1, numpy.inf, -5.0]])
    extra_truths = numpy.array([[-1, -1, -1], [-1, -100, -1]], dtype="int32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        padded = loss.compute(
            numpy.vstack([h, extra_h]), numpy.vstack([truths, extra_truths]), a, b, alpha
        )
    assert padded.loss == pytest.approx(base.loss, rel=1e-12)
    numpy.testing.assert_allclose(padded.task_losses, base.task_losses, rtol=1e-12)
    numpy.testing.assert_allclose(padded.d_h[: len(h)], base.d_h, rtol=1e-12)
    assert (padded.d_h[len(h) :] == 0).all()
    for name in ("d_a", "d_b", "d_alpha"):
        numpy.testing.assert_allclose(getattr(padded, name), getattr(base, name), rtol=1e-12)


# One task per case: no positives, no negatives, all missing.
ONE_SIDED_H = numpy.array([[0.2], [0.6], [0.9]])
NO_POS = numpy.array([[0], [0], [-1]], dtype="int32")
NO_NEG = numpy.array([[1], [-1], [1]], dtype="int32")
ALL_MISSING = numpy.array([[-1], [-1], [-1]], dtype="int32")
ONE_A, ONE_B, ONE_ALPHA = numpy.array([0.7]), numpy.array([0.3]), numpy.array([0.5])


def _one_task(loss, truths):
    result = loss.compute(ONE_SIDED_H, truths, ONE_A, ONE_B, ONE_ALPHA)
    assert numpy.isfinite(result.loss)
    for array in (result.d_h, result.d_a, result.d_b, result.d_alpha, result.task_losses):
        assert numpy.isfinite(array).all()
    return result


def test_auc_margin_conditional_one_sided_keeps_the_variance_term():
    loss = AUCMarginLoss()
    no_pos = _one_task(loss, NO_POS)
    # L = mean_neg (h - b)^2 over 0.2, 0.6; the min-max term is dropped.
    assert no_pos.loss == pytest.approx(((0.2 - 0.3) ** 2 + (0.6 - 0.3) ** 2) / 2)
    numpy.testing.assert_allclose(no_pos.d_h[:, 0], [2 * (0.2 - 0.3) / 2, 2 * (0.6 - 0.3) / 2, 0])
    numpy.testing.assert_allclose(no_pos.d_b, [-2 * ((0.2 + 0.6) / 2 - 0.3)])
    assert no_pos.d_a[0] == 0 and no_pos.d_alpha[0] == 0
    no_neg = _one_task(loss, NO_NEG)
    assert no_neg.loss == pytest.approx(((0.2 - 0.7) ** 2 + (0.9 - 0.7) ** 2) / 2)
    numpy.testing.assert_allclose(no_neg.d_h[:, 0], [2 * (0.2 - 0.7) / 2, 0, 2 * (0.9 - 0.7) / 2])
    assert no_neg.d_b[0] == 0 and no_neg.d_alpha[0] == 0


def test_auc_margin_libauc_one_sided_is_zero_with_the_batch_ratio():
    loss = AUCMarginLoss(form="libauc")
    for truths in (NO_POS, NO_NEG):
        result = _one_task(loss, truths)
        assert result.loss == 0
        assert not result.d_h.any() and not result.d_a.any() and not result.d_b.any()
        assert not result.d_alpha.any()


def test_auc_margin_libauc_one_sided_with_imratio_keeps_its_side():
    p, alpha = 0.2, 0.5
    result = _one_task(AUCMarginLoss(form="libauc", imratio=p), NO_POS)
    # T = 2 negatives: p mean_T (h-b)^2 + 2 alpha (p(1-p) m + p mean_T h) - p(1-p) alpha^2
    expected = (
        p * ((0.2 - 0.3) ** 2 + (0.6 - 0.3) ** 2) / 2
        + 2 * alpha * (p * (1 - p) + p * (0.2 + 0.6) / 2)
        - p * (1 - p) * alpha**2
    )
    assert result.loss == pytest.approx(expected)
    assert result.d_a[0] == 0


@pytest.mark.parametrize("form", FORMS)
def test_auc_margin_all_missing_task_is_zero(form):
    result = _one_task(_loss(form), ALL_MISSING)
    assert result.loss == 0
    for array in (result.d_h, result.d_a, result.d_b, result.d_alpha, result.task_losses):
        assert not array.any()
    empty = _loss(form).compute(numpy.zeros((0, 2)), numpy.zeros((0, 2), dtype="int32"), A, B, ALPHA)
    assert empty.loss == 0 and empty.d_h.shape == (0, 2) and not empty.d_alpha.any()


def test_auc_margin_ascend_alpha_is_projected():
    loss = AUCMarginLoss(alpha_lr=0.1)
    stays = loss.ascend_alpha(numpy.array([0.0, 0.05]), numpy.array([-3.0, -1.0]))
    numpy.testing.assert_array_equal(stays, [0.0, 0.0])
    grows = loss.ascend_alpha(numpy.array([0.0, 0.2]), numpy.array([1.0, 0.5]))
    numpy.testing.assert_allclose(grows, [0.1, 0.25])


def test_auc_margin_alpha_reaches_the_batch_maximiser():
    # alpha_lr = 0.5 and d2L/dalpha2 = -2: the step lands on
    # max(0, m - mean_pos h + mean_neg h), here 1 - 0.75 + 0.25 and 1 - 0.7 + 0.7/3.
    loss = AUCMarginLoss(alpha_lr=0.5)
    alpha = numpy.zeros(2)
    for _ in range(3):
        alpha = loss.ascend_alpha(alpha, loss.compute(H, TRUTHS, A, B, alpha).d_alpha)
    numpy.testing.assert_allclose(alpha, [0.5, 1 - 0.7 + 0.7 / 3])
    # A margin below the gap in means: 0.1 - 0.5 < 0 and 0.1 - 0.7 + 0.7/3 < 0, so 0.
    small = AUCMarginLoss(alpha_lr=0.5, margin=0.1)
    alpha = small.ascend_alpha(ALPHA, small.compute(H, TRUTHS, A, B, ALPHA).d_alpha)
    numpy.testing.assert_array_equal(alpha, [0.0, 0.0])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("alpha_lr", [0.05, 0.5, 1.0])
def test_auc_margin_ascent_does_not_lower_the_loss(form, alpha_lr):
    loss = _loss(form, alpha_lr=alpha_lr)
    for seed in range(4):
        h, truths, a, b, alpha = _random_case(seed)
        before = loss.compute(h, truths, a, b, alpha)
        new_alpha = loss.ascend_alpha(alpha, before.d_alpha)
        after = loss.compute(h, truths, a, b, new_alpha)
        assert (new_alpha >= 0).all()
        assert (after.task_losses >= before.task_losses - 1e-12).all()


def test_auc_margin_a_and_b_converge_to_the_class_means():
    loss = AUCMarginLoss()
    a, b = numpy.zeros(2), numpy.ones(2)
    for _ in range(200):
        result = loss.compute(H, TRUTHS, a, b, ALPHA)
        a, b = a - 0.1 * result.d_a, b - 0.1 * result.d_b
    numpy.testing.assert_allclose(a, [0.75, 0.7], atol=1e-8)
    numpy.testing.assert_allclose(b, [0.25, 0.7 / 3], atol=1e-8)


@pytest.mark.parametrize(
    "kwargs,setting",
    [
        ({"margin": 0.0}, "margin"),
        ({"margin": -1.0}, "margin"),
        ({"alpha_lr": 0.0}, "alpha_lr"),
        ({"alpha_lr": 1.5}, "alpha_lr"),
        ({"form": "pairwise"}, "form"),
        ({"form": "libauc", "imratio": 0.0}, "imratio"),
        ({"form": "libauc", "imratio": 1.0}, "imratio"),
        ({"imratio": 0.2}, "imratio"),
    ],
)
def test_auc_margin_validation_names_the_setting(kwargs, setting):
    with pytest.raises(ValueError, match=setting):
        AUCMarginLoss(**kwargs)


@pytest.mark.parametrize("form", ["conditional", "libauc"])
@pytest.mark.parametrize("alpha_lr", [0.1, 1.0])
def test_auc_margin_at_its_bound_stays_finite_in_float32(form, alpha_lr):
    """Issue 31, L1: margin 1e38 gave an inf loss; at the bound (1e18) the
    loss and gradients stay finite while alpha climbs to the margin, with
    the paper's task weight of 100, and above it the loss says so."""
    rng = numpy.random.default_rng(0)
    loss = AUCMarginLoss(margin=1e18, alpha_lr=alpha_lr, form=form)
    zeros = numpy.zeros(2, dtype="float32")
    alpha = zeros.copy()
    weights = numpy.array([1.0, 100.0], dtype="float32")
    highest = 0.0
    for _ in range(60):
        h = rng.random((32, 2)).astype("float32")
        truths = (rng.random((32, 2)) < 0.2).astype("int32")
        with numpy.errstate(all="ignore"):
            result = loss.compute(h, truths, zeros, zeros, alpha, weights)
        arrays = (result.d_h, result.d_a, result.d_b, result.d_alpha, result.task_losses)
        assert math.isfinite(result.loss) and all(numpy.isfinite(a).all() for a in arrays)
        alpha = loss.ascend_alpha(alpha, result.d_alpha)
        # alpha_lr = 1 reflects alpha about the maximiser: 0, 2 gap, 0, ...
        highest = max(highest, float(alpha.max()))
    assert highest > 1e17
    with pytest.raises(ValueError, match=r"AUCMarginLoss: margin must be in \(0, 1e\+18\]"):
        AUCMarginLoss(margin=1.1e18)


def test_auc_margin_validation_message_lists_forms():
    with pytest.raises(ValueError, match="conditional.*libauc"):
        AUCMarginLoss(form="pairwise")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "line,setting",
    [
        ("margin = -0.5", "margin"),
        ("alpha_lr = 2.0", "alpha_lr"),
        ('form = "pairwise"', "form"),
        ("imratio = 0.2", "imratio"),
    ],
)
def test_auc_margin_config_validation_names_the_setting(line, setting):
    config = Config().from_str(f'[loss]\n@losses = "spacy-imbalance.AUCMarginLoss.v1"\n{line}\n')
    # confection's ConfigValidationError (the Literal on form) is a ValueError too.
    with pytest.raises(ValueError, match=setting):
        registry.resolve(config)


def test_auc_margin_from_config():
    config = Config().from_str(
        '[loss]\n@losses = "spacy-imbalance.AUCMarginLoss.v1"\nmargin = 0.6\nform = "libauc"\nimratio = 0.1\n'
    )
    loss = registry.resolve(config)["loss"]
    assert isinstance(loss, AUCMarginLoss)
    assert (loss.margin, loss.alpha_lr, loss.form, loss.imratio) == (0.6, 0.1, "libauc", 0.1)
    default = registry.resolve(Config().from_str('[loss]\n@losses = "spacy-imbalance.AUCMarginLoss.v1"\n'))
    assert (default["loss"].form, default["loss"].margin) == ("conditional", 1.0)


def test_auc_margin_input_validation():
    loss = AUCMarginLoss()
    with pytest.raises(ValueError, match="shape"):
        loss.compute(H, TRUTHS[:, :1], A, B, ALPHA)
    with pytest.raises(ValueError, match="alpha"):
        loss.compute(H, TRUTHS, A, B, numpy.array([0.1, -0.1]))
    with pytest.raises(ValueError, match="task_weights"):
        loss.compute(H, TRUTHS, A, B, ALPHA, task_weights=numpy.array([1.0]))
    with pytest.raises(ValueError, match="truths"):
        loss.compute(H, TRUTHS + 1, A, B, ALPHA)


@pytest.mark.parametrize("form", FORMS)
def test_auc_margin_pickles(form):
    loss = _loss(form, margin=0.8, alpha_lr=0.3)
    copy = pickle.loads(pickle.dumps(loss))
    h, truths, a, b, alpha = _random_case(5)
    expected, got = loss.compute(h, truths, a, b, alpha), copy.compute(h, truths, a, b, alpha)
    assert got.loss == expected.loss
    for name in ("d_h", "d_a", "d_b", "d_alpha", "task_losses"):
        numpy.testing.assert_array_equal(getattr(got, name), getattr(expected, name))
    numpy.testing.assert_array_equal(
        copy.ascend_alpha(alpha, got.d_alpha), loss.ascend_alpha(alpha, expected.d_alpha)
    )

"""The partial-label loss (``losses/partial.py``): hand-computed values,
finite differences, exact equality with cross-entropy where one class is
allowed, accuracy at the extremes, the allowed masks, and device runs."""
import math

import numpy
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spacy_imbalance.losses import CrossEntropy
from spacy_imbalance.losses.partial import (
    allowed_mask,
    partial_label_loss,
    partial_label_terms,
    scope_columns,
    scope_table,
)

from ._gradients import numeric_gradient

LABELS = ["PER", "ORG", "LOC", "PROD"]


def random_batch(n_rows=40, n_columns=5, scale=4.0, seed=0, dtype="float32"):
    rng = numpy.random.default_rng(seed)
    logits = (scale * rng.normal(size=(n_rows, n_columns))).astype(dtype)
    allowed = rng.random(size=(n_rows, n_columns)) < 0.4
    allowed[numpy.arange(n_rows), rng.integers(0, n_columns, size=n_rows)] = True  # at least one per row
    return logits, allowed


# -- the loss ------------------------------------------------------------------


def test_partial_loss_hand_computed_two_rows():
    # row 0: p = (1/4, 1/4, 1/2), O or column 2 allowed: p_A = 3/4
    # row 1: p = (3/5, 1/5, 1/5), only column 1 (gold): cross-entropy
    logits = numpy.log(numpy.asarray([[1.0, 1.0, 2.0], [3.0, 1.0, 1.0]]))
    allowed = numpy.asarray([[True, False, True], [False, True, False]])
    loss, grad = partial_label_loss(logits, allowed)
    assert loss == pytest.approx((math.log(4 / 3) + math.log(5)) / 2, rel=1e-12)
    # p_k - [k allowed] p_k / p_A, over the mean's 2 rows
    expected = numpy.asarray([[1 / 4 - 1 / 3, 1 / 4, 1 / 2 - 2 / 3], [3 / 5, 1 / 5 - 1, 1 / 5]]) / 2
    assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)


def test_partial_loss_gradient_matches_finite_differences():
    logits, allowed = random_batch(n_rows=12, scale=2.0, dtype="float64")
    weights = numpy.random.default_rng(1).uniform(0.2, 2.0, size=len(logits))
    _, grad = partial_label_loss(logits, allowed, weights=weights)
    numeric = numeric_gradient(lambda x: partial_label_loss(x, allowed, weights=weights)[0], logits)
    assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("scale", [1.0, 5.0, 40.0])
@pytest.mark.parametrize("normalize", [True, False])
def test_partial_loss_with_one_allowed_class_is_cross_entropy_exactly(scale, normalize):
    """A scope covering every type: every row allows its gold class alone,
    and loss and gradient are CrossEntropy's to the last bit (missing rows too)."""
    rng = numpy.random.default_rng(3)
    logits = (scale * rng.normal(size=(60, 5))).astype("float32")
    gold = rng.integers(-1, 5, size=60).astype("int32")
    allowed = allowed_mask(gold, scope_columns(LABELS, set(LABELS)))
    loss, grad = partial_label_loss(logits, allowed, normalizer=None if normalize else 1.0)
    expected_grad, expected_loss = CrossEntropy(normalize=normalize).compute(logits, gold)
    assert loss == expected_loss
    assert_array_equal(grad, expected_grad)
    assert grad.dtype == expected_grad.dtype


def test_partial_loss_stays_accurate_when_tiny():
    """Most mass on the allowed set: the loss is p_out ~ 1e-9, which the
    difference of two float32 logsumexps would round to 0."""
    logits = numpy.asarray([[20.0, 20.0, 0.0]], dtype="float32")
    allowed = numpy.asarray([[True, True, False]])
    p_out = math.exp(-20) / (2 + math.exp(-20))
    loss, grad = partial_label_loss(logits, allowed)
    assert loss == pytest.approx(-math.log1p(-p_out), rel=1e-5)
    assert_allclose(grad[0], [-p_out / 2, -p_out / 2, p_out], rtol=1e-5)


def test_partial_loss_stays_finite_when_the_allowed_set_is_improbable():
    logits = numpy.asarray([[-50.0, -50.0, 50.0]], dtype="float32")
    allowed = numpy.asarray([[True, True, False]])
    # underflow to 0 is how a softmax gets its zeros; overflow, nan or log(0) would be bugs
    with numpy.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        loss, grad = partial_label_loss(logits, allowed)
    assert loss == pytest.approx(100 - math.log(2), rel=1e-6)
    assert_allclose(grad[0], [-0.5, -0.5, 1.0], rtol=1e-6)


def test_partial_loss_is_zero_where_every_class_is_allowed():
    logits, _ = random_batch(n_rows=6)
    loss, grad = partial_label_loss(logits, numpy.ones(logits.shape, dtype=bool))
    assert loss == 0.0
    assert not grad.any()


def test_partial_loss_ignores_rows_that_allow_nothing():
    logits, allowed = random_batch(n_rows=8)
    with_missing = numpy.concatenate([allowed, numpy.zeros((3, allowed.shape[1]), dtype=bool)])
    more_logits = numpy.concatenate([logits, 100 * numpy.ones((3, logits.shape[1]), dtype="float32")])
    loss, grad = partial_label_loss(more_logits, with_missing)
    expected_loss, expected_grad = partial_label_loss(logits, allowed)
    # the mean is over the 8 rows that allow something
    assert loss == pytest.approx(expected_loss, rel=1e-6)
    assert_allclose(grad[:8], expected_grad, rtol=1e-6)
    assert not grad[8:].any()


def test_partial_loss_of_nothing_allowed_is_zero():
    logits, _ = random_batch(n_rows=4)
    loss, grad = partial_label_loss(logits, numpy.zeros(logits.shape, dtype=bool))
    assert loss == 0.0 and not grad.any()


def test_partial_loss_weights_scale_rows_and_keep_the_row_mean():
    logits, allowed = random_batch(n_rows=6, dtype="float64")
    weights = numpy.asarray([1.0, 0.0, 2.0, 1.0, 1.0, 0.5])
    loss, grad = partial_label_loss(logits, allowed, weights=weights)
    rows, row_grads = partial_label_terms(logits, allowed)
    assert loss == pytest.approx(float((weights * rows).sum() / 6), rel=1e-12)
    assert_allclose(grad, weights[:, None] * row_grads / 6, rtol=1e-12)
    assert not grad[1].any()


@pytest.mark.parametrize(
    "weights,match",
    [
        ([1.0, 1.0], r"weights must have shape \(3,\), one per row, got shape \(2,\)"),
        ([1.0, -1.0, 1.0], r"weights must be finite and >= 0, got \[-1.0\] among them"),
        ([1.0, float("nan"), 1.0], r"weights must be finite and >= 0, got \[nan\] among them"),
    ],
)
def test_partial_loss_refuses_bad_weights(weights, match):
    logits, allowed = random_batch(n_rows=3)
    with pytest.raises(ValueError, match=match):
        partial_label_loss(logits, allowed, weights=numpy.asarray(weights))


def test_partial_loss_refuses_a_mask_of_another_shape_or_type():
    logits, allowed = random_batch(n_rows=3)
    with pytest.raises(ValueError, match=r"allowed must be a bool mask of the logits' shape \(3, 5\), got shape \(3, 4\)"):
        partial_label_loss(logits, allowed[:, :4])
    with pytest.raises(ValueError, match="and dtype int64"):
        partial_label_loss(logits, allowed.astype("int64"))


def test_partial_loss_refuses_a_bad_normalizer():
    logits, allowed = random_batch(n_rows=3)
    with pytest.raises(ValueError, match="normalizer must be > 0, got 0.0"):
        partial_label_loss(logits, allowed, normalizer=0.0)


# -- the allowed mask ------------------------------------------------------------


def test_allowed_mask_per_kind_of_row():
    # columns: O PER ORG LOC PROD; the document annotates PER and ORG
    out_of_scope = scope_columns(LABELS, {"PER", "ORG"})
    assert out_of_scope.tolist() == [False, False, False, True, True]
    gold = numpy.asarray([2, 0, 0, -1], dtype="int32")
    known = numpy.asarray([False, False, True, False])
    mask = allowed_mask(gold, out_of_scope, known_negative=known)
    assert mask.astype(int).tolist() == [
        [0, 0, 1, 0, 0],  # gold ORG: ORG only
        [1, 0, 0, 1, 1],  # unannotated: O, or a type the document does not annotate
        [1, 0, 0, 0, 0],  # a known negative: O only
        [0, 0, 0, 0, 0],  # missing annotation: nothing, the row is ignored
    ]


def test_allowed_mask_without_scope_is_the_gold_class():
    gold = numpy.asarray([3, 0, -1], dtype="int32")
    mask = allowed_mask(gold, scope_columns(LABELS, None))
    assert mask.astype(int).tolist() == [[0, 0, 0, 1, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]]


def test_scope_columns_of_tags_follow_each_tags_type():
    # token_ner's BIO columns after O: B-PER I-PER B-ORG I-ORG
    assert scope_columns(["PER", "PER", "ORG", "ORG"], {"PER"}).tolist() == [False, False, False, True, True]


def test_allowed_mask_per_row_scopes_from_a_table():
    table = scope_table(LABELS, [None, {"LOC"}])
    rows_doc = numpy.asarray([0, 0, 1, 1])
    gold = numpy.asarray([0, 1, 0, 3], dtype="int32")
    mask = allowed_mask(gold, table[rows_doc])
    assert mask.astype(int).tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 1, 1, 0, 1], [0, 0, 0, 1, 0]]


def test_scope_columns_refuse_unknown_and_empty_scopes():
    with pytest.raises(ValueError, match=r"label scope \['MISC', 'PER'\] names labels the model does not have: 'MISC'"):
        scope_columns(LABELS, {"PER", "MISC"})
    with pytest.raises(ValueError, match="a label scope needs at least one label, got an empty one"):
        scope_columns(LABELS, set())


def test_allowed_mask_refuses_gold_outside_the_scope_or_range():
    out_of_scope = scope_columns(LABELS, {"PER"})
    with pytest.raises(ValueError, match=r"row 1: gold class 3 is outside the row's label scope \(1 such row\(s\)\)"):
        allowed_mask(numpy.asarray([1, 3], dtype="int32"), out_of_scope)
    with pytest.raises(ValueError, match=r"row 0: gold class 5 is out of range for 5 columns \(O and 4 labels\)"):
        allowed_mask(numpy.asarray([5, 0], dtype="int32"), out_of_scope)


def test_allowed_mask_refuses_bad_shapes():
    gold = numpy.asarray([0, 1], dtype="int32")
    with pytest.raises(ValueError, match="out_of_scope has 3 rows but gold has 2"):
        allowed_mask(gold, numpy.zeros((3, 5), dtype=bool))
    with pytest.raises(ValueError, match=r"out_of_scope marks column 0 \(O\)"):
        allowed_mask(gold, numpy.ones(5, dtype=bool))
    with pytest.raises(ValueError, match=r"known_negative must have shape \(2,\) to match gold, got \(3,\)"):
        allowed_mask(gold, numpy.zeros(5, dtype=bool), known_negative=numpy.zeros(3, dtype=bool))


# -- devices (numpy, fake cupy, cupy) --------------------------------------------


@pytest.mark.parametrize("mask_on", ["host", "device"])
def test_partial_loss_on_device_equals_numpy(device_ops, mask_on):
    logits, allowed = random_batch()
    allowed[:2] = False  # ignored rows
    weights = numpy.linspace(0.5, 1.5, len(logits)).astype("float32")
    expected_loss, expected_grad = partial_label_loss(logits, allowed, weights=weights)
    mask = allowed if mask_on == "host" else device_ops.xp.asarray(allowed)
    loss, grad = partial_label_loss(device_ops.asarray2f(logits), mask, weights=weights)
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    assert_allclose(device_ops.to_numpy(grad), expected_grad, rtol=1e-5, atol=1e-7)


def test_allowed_mask_on_device_equals_numpy(device_ops):
    gold = numpy.asarray([2, 0, 0, -1, 4], dtype="int32")
    out_of_scope = scope_columns(LABELS, {"ORG", "PROD"})
    known = numpy.asarray([False, False, True, False, False])
    expected = allowed_mask(gold, out_of_scope, known_negative=known)
    got = allowed_mask(device_ops.asarray1i(gold), out_of_scope, known_negative=device_ops.xp.asarray(known))
    assert_array_equal(device_ops.to_numpy(got), expected)


def test_partial_loss_copies_once_per_call(fake_ops):
    """A host mask (and host weights) are checked and counted there and
    uploaded once; the loss value is the one copy back."""
    logits, allowed = random_batch(n_rows=500)
    device_logits = fake_ops.asarray2f(logits)
    with fake_ops.measure() as counts:
        partial_label_loss(device_logits, allowed, weights=numpy.ones(500, dtype="float32"))
    # the weights, checked on the host, are the second upload; nothing runs in float64
    assert (counts.copies, counts.syncs, counts.uploads, counts.float64) == (1, 0, 2, 0)


def test_partial_loss_with_a_device_mask_and_a_normalizer_copies_once(fake_ops):
    logits, allowed = random_batch(n_rows=500)
    device_logits, device_mask = fake_ops.asarray2f(logits), fake_ops.xp.asarray(allowed)
    with fake_ops.measure() as counts:
        partial_label_loss(device_logits, device_mask, normalizer=500.0)
    assert (counts.copies, counts.syncs, counts.uploads) == (1, 0, 0)


def test_allowed_mask_with_device_gold_copies_it_once(fake_ops):
    gold = fake_ops.asarray1i(numpy.asarray([2, 0, -1] * 100, dtype="int32"))
    with fake_ops.measure() as counts:
        allowed_mask(gold, scope_columns(LABELS, {"ORG"}))
    # gold back once to be checked, the scope's columns up once
    assert (counts.copies, counts.syncs, counts.uploads) == (1, 0, 1)

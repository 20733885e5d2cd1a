"""The losses on device arrays (the ``device_ops`` fixture: numpy, the fake
cupy of tests/device.py, and cupy where there is a GPU): the same losses and
gradients as on numpy, and a fixed number of host transfers per call."""
from typing import Callable, Dict

import numpy
import pytest
from numpy.testing import assert_allclose

from spacy_imbalance.losses import (
    AUCMarginLoss,
    CrossEntropy,
    DiceLoss,
    FocalLoss,
    MoMLoss,
    MoMLossV2,
    TokenLoss,
    WeightedCrossEntropy,
)


def _weighted() -> WeightedCrossEntropy:
    loss = WeightedCrossEntropy(scheme="log")
    loss.initialize([50, 7, 3, 1])
    return loss


LOSSES: Dict[str, Callable[[], TokenLoss]] = {
    "ce": CrossEntropy,
    "ce_sum": lambda: CrossEntropy(normalize=False),
    "wce": _weighted,
    "focal": lambda: FocalLoss(gamma=2.0, alpha=0.25),
    "focal_fractional": lambda: FocalLoss(gamma=0.5),
    "dice": lambda: DiceLoss(alpha=0.1, gamma=1.0),
    "mom": lambda: MoMLoss(lambda_=0.3),
    "mom_focal": lambda: MoMLoss(lambda_=0.3, base=FocalLoss()),
    "mom_dice": lambda: MoMLoss(lambda_=0.5, base=DiceLoss()),
}
# float32 on a GPU sums in another order
TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}


def batch(n_tokens: int = 12, n_classes: int = 4, seed: int = 0):
    rng = numpy.random.default_rng(seed)
    logits = (3 * rng.normal(size=(n_tokens, n_classes))).astype("float32")
    truths = rng.integers(-1, n_classes, size=n_tokens).astype("int32")
    truths[:2] = [0, -1]  # at least one O and one missing token
    return logits, truths


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("truths_on", ["host", "device"])
def test_loss_on_device_equals_numpy(device_ops, name, truths_on):
    logits, truths = batch()
    expected_grad, expected_loss = LOSSES[name]().compute(logits, truths)
    gold = truths if truths_on == "host" else device_ops.asarray1i(truths)
    grad, loss = LOSSES[name]().compute(device_ops.asarray2f(logits), gold)
    assert isinstance(loss, float)
    assert loss == pytest.approx(expected_loss, rel=1e-5)
    assert_allclose(device_ops.to_numpy(grad), expected_grad, **TOLERANCE)
    assert expected_loss > 0 and numpy.abs(expected_grad).sum() > 0


def test_mom_v2_sequences_on_device_equal_numpy(device_ops):
    logits, truths = batch(n_tokens=10)
    loss = MoMLossV2(lambda_=0.3, max_length=16)
    expected_grad, expected_loss = loss.compute_sequences(logits, truths, [4, 6])
    grad, got = loss.compute_sequences(device_ops.asarray2f(logits), truths, [4, 6])
    assert got == pytest.approx(expected_loss, rel=1e-5)
    assert_allclose(device_ops.to_numpy(grad), expected_grad, **TOLERANCE)


@pytest.mark.parametrize("name", LOSSES)
def test_all_missing_batch_on_device_is_zero(device_ops, name):
    logits, _ = batch()
    grad, loss = LOSSES[name]().compute(device_ops.asarray2f(logits), numpy.full(len(logits), -1, dtype="int32"))
    assert loss == 0.0 and not device_ops.to_numpy(grad).any()


@pytest.mark.parametrize("truths_on", ["host", "device"])
def test_bad_gold_ids_are_refused_on_device(device_ops, truths_on):
    logits, truths = batch()
    truths[3] = 4  # logits have 4 classes: ids 0..3
    gold = truths if truths_on == "host" else device_ops.asarray1i(truths)
    with pytest.raises(ValueError, match="Gold id 4 is out of range"):
        CrossEntropy().compute(device_ops.asarray2f(logits), gold)


def auc_inputs(n_tokens: int = 9, seed: int = 0):
    rng = numpy.random.default_rng(seed)
    h = rng.uniform(size=(n_tokens, 2)).astype("float32")
    truths = rng.integers(-1, 2, size=(n_tokens, 2)).astype("int32")
    truths[:2] = [[1, 0], [0, 1]]  # both classes in both tasks
    a = numpy.asarray([0.8, 0.9], dtype="float32")
    b = numpy.asarray([0.1, 0.2], dtype="float32")
    alpha = numpy.asarray([0.3, 0.0], dtype="float32")
    return h, truths, a, b, alpha


@pytest.mark.parametrize("form", ["conditional", "libauc"])
@pytest.mark.parametrize("weights", [None, [1.0, 100.0]])
def test_auc_margin_on_device_equals_numpy(device_ops, form, weights):
    h, truths, a, b, alpha = auc_inputs()
    loss = AUCMarginLoss(form=form)
    task_weights = None if weights is None else numpy.asarray(weights, dtype="float32")
    expected = loss.compute(h, truths, a, b, alpha, task_weights=task_weights)
    up = device_ops.asarray1f
    got = loss.compute(
        device_ops.asarray2f(h), truths, up(a), up(b), up(alpha), task_weights=None if weights is None else weights
    )
    assert got.loss == pytest.approx(expected.loss, rel=1e-5)
    for field in ("d_h", "d_a", "d_b", "d_alpha", "task_losses"):
        assert_allclose(device_ops.to_numpy(getattr(got, field)), getattr(expected, field), **TOLERANCE)
    stepped = loss.ascend_alpha(up(alpha), got.d_alpha)
    assert_allclose(device_ops.to_numpy(stepped), loss.ascend_alpha(alpha, expected.d_alpha), **TOLERANCE)


# -- sync budgets (fake cupy) ------------------------------------------------


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("n_tokens", [12, 1200])
def test_loss_copies_once_per_call(fake_ops, name, n_tokens):
    """Gold ids from the host are validated there and uploaded once; the
    loss value is the one copy back, whatever the batch size."""
    logits, truths = batch(n_tokens=n_tokens)
    loss = LOSSES[name]()
    device_logits = fake_ops.asarray2f(logits)
    with fake_ops.measure() as counts:
        loss.compute(device_logits, truths)
    # weighted CE uploads its K class weights too
    assert (counts.copies, counts.syncs, counts.uploads) == (1, 0, 2 if name == "wce" else 1)


@pytest.mark.parametrize("name", LOSSES)
def test_loss_with_device_ids_copies_them_once(fake_ops, name):
    """Gold ids already on the device are copied back once to be validated."""
    logits, truths = batch()
    loss = LOSSES[name]()
    device_logits, device_truths = fake_ops.asarray2f(logits), fake_ops.asarray1i(truths)
    with fake_ops.measure() as counts:
        loss.compute(device_logits, device_truths)
    assert (counts.copies, counts.syncs, counts.uploads) == (2, 0, 1 if name == "wce" else 0)


def test_mom_v2_copies_once_per_call(fake_ops):
    logits, truths = batch()
    device_logits = fake_ops.asarray2f(logits)
    with fake_ops.measure() as counts:
        MoMLossV2(lambda_=0.3).compute_sequences(device_logits, truths, [5, 7])
    assert (counts.copies, counts.syncs) == (1, 0)


@pytest.mark.parametrize("n_tokens", [9, 900])
def test_auc_margin_copies_once_per_call(fake_ops, n_tokens):
    """Host gold and weights are checked on the host; alpha on the device
    (projected by ascend_alpha) is not read back."""
    h, truths, a, b, alpha = auc_inputs(n_tokens)
    up = fake_ops.asarray1f
    args = (fake_ops.asarray2f(h), truths, up(a), up(b), up(alpha))
    with fake_ops.measure() as counts:
        AUCMarginLoss().compute(*args, task_weights=numpy.asarray([1.0, 100.0], dtype="float32"))
    assert (counts.copies, counts.syncs) == (1, 0)

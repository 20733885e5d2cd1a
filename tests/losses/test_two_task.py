"""two_task_ner's cross entropies (losses/two_task.py) against a loop written
out per token, and the check of a loss for span rows (losses/base.py)."""
import math

import numpy
import pytest
from spacy.util import registry
from thinc.api import NumpyOps

from spacy_imbalance.losses.base import check_span_loss
from spacy_imbalance.losses.two_task import binary_cross_entropy, softmax_cross_entropy

OPS = NumpyOps()


def test_softmax_cross_entropy_is_the_mean_over_present_tokens():
    logits = numpy.asarray([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0], [3.0, -1.0, 2.0], [5.0, 5.0, 5.0]], dtype="f")
    gold = numpy.asarray([1, -1, 0, 2], dtype="int32")
    loss, grad = softmax_cross_entropy(OPS, logits, gold)
    expected, expected_grad = 0.0, numpy.zeros_like(logits)
    for row, g in enumerate(gold):
        if g < 0:
            continue
        p = numpy.exp(logits[row] - logits[row].max()) / numpy.exp(logits[row] - logits[row].max()).sum()
        expected -= math.log(p[g]) / 3
        expected_grad[row] = (p - numpy.eye(3)[g]) / 3
    assert loss.to_float() == pytest.approx(expected, rel=1e-6)
    numpy.testing.assert_allclose(grad, expected_grad, atol=1e-7)
    assert grad.dtype == logits.dtype and not grad[1].any()


def test_binary_cross_entropy_weights_each_task_mean():
    logits = numpy.asarray([[2.0, -1.0], [-3.0, 0.5], [0.0, 100.0]], dtype="f")
    tasks = numpy.asarray([[1, 0], [0, -1], [-1, 1]], dtype="int32")
    weights = numpy.asarray([1.0, 10.0], dtype="f")
    h = 1 / (1 + numpy.exp(-logits))
    loss, grad = binary_cross_entropy(OPS, logits, h, tasks, weights)
    expected = 0.0
    expected_grad = numpy.zeros_like(logits)
    for column in range(2):
        present = [row for row in range(3) if tasks[row, column] >= 0]
        for row in present:
            y, x = tasks[row, column], float(logits[row, column])
            expected += weights[column] * (math.log1p(math.exp(-abs(x))) + max(x, 0) - x * y) / len(present)
            expected_grad[row, column] = weights[column] * (h[row, column] - y) / len(present)
    assert loss.to_float() == pytest.approx(expected, rel=1e-5)
    numpy.testing.assert_allclose(grad, expected_grad, rtol=1e-6, atol=1e-7)
    assert grad[1, 1] == 0 and grad[2, 0] == 0


@pytest.mark.parametrize(
    "loss,message",
    [
        ("not a loss", "sampled_spancat 'x': loss must be a loss from spacy_imbalance.losses .* got str"),
        (registry.losses.get("spacy-imbalance.MoMLoss.v2")(), "sampled_spancat 'x': loss MoMLossV2 averages over sentences of tokens"),
    ],
)
def test_a_loss_for_span_rows_is_checked(loss, message):
    with pytest.raises(ValueError, match=message):
        check_span_loss(loss, "sampled_spancat 'x'")
    check_span_loss(registry.losses.get("spacy-imbalance.CrossEntropy.v1")(), "sampled_spancat 'x'")

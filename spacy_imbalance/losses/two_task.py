"""The losses of ``two_task_ner`` besides the AUC margin loss
(``auc_margin``): binary cross entropy per task (the CE-2T baseline) and a
softmax cross entropy over its BIO head (the CE phase of COMAUC-2T) and its
type head.

Both take logits on the device and gold ids on the host, where the
non-missing tokens are counted before one upload, and return the loss as a
``DeviceLoss`` (copied to the host once, with the other heads' terms) and
the gradient w.r.t. the logits. A negative gold id is missing: no loss, a
zero gradient.
"""
from typing import Any, Tuple

from thinc.api import Ops
from thinc.types import Floats1d, Floats2d, Ints1d, Ints2d

from ..decisions.softmax import log_softmax
from .base import DeviceLoss


def softmax_cross_entropy(ops: Ops, logits: Floats2d, gold: Ints1d) -> Tuple[DeviceLoss, Floats2d]:
    """Token-mean cross entropy over the non-missing tokens of ``gold``
    (class ids on the host, counted there before one upload)."""
    xp: Any = ops.xp
    n = max(int((gold >= 0).sum()), 1)
    gold = ops.asarray1i(gold)
    present = gold >= 0
    log_p = log_softmax(xp, logits)
    safe = xp.where(present, gold, 0)
    rows = xp.arange(len(gold))
    total = -xp.where(present, log_p[rows, safe], 0).sum()
    grad = xp.exp(log_p)
    grad[rows, safe] -= 1.0
    return DeviceLoss.term(total, n), xp.where(present[:, None], grad / n, 0).astype(logits.dtype)


def binary_cross_entropy(ops: Ops, logits: Floats2d, h: Floats2d, tasks: Ints2d, weights: Floats1d) -> Tuple[DeviceLoss, Floats2d]:
    """Binary cross entropy per task (a column of ``tasks``, 1/0 or
    missing), a mean over the task's non-missing tokens, weighted by
    ``weights`` (two_task_ner: entity + lambda_ * begin, Eq. 4). ``h`` is the
    sigmoid of ``logits``; ``tasks`` and ``weights`` are on the device."""
    xp: Any = ops.xp
    present = tasks >= 0
    y = xp.where(present, tasks, 0).astype(logits.dtype)
    # counts in the logits' float32: int64 counts would make the division,
    # and all that follows, float64 on the device
    counts = xp.maximum(present.sum(axis=0), 1).astype(logits.dtype)
    # log(1 + e^-|x|) form: stable for large |logits|
    per_token = xp.maximum(logits, 0) - logits * y + xp.log1p(xp.exp(-xp.abs(logits)))
    total = (xp.where(present, per_token, 0).sum(axis=0) / counts * weights).sum()
    grad = xp.where(present, (h - y) / counts * weights, 0)
    return DeviceLoss.term(total), grad.astype(logits.dtype)

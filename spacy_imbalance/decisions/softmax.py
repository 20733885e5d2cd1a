"""The softmax of rows of logits, the one home of every form the package
uses. ``xp`` is the logits' array module (NumPy, or CuPy on a GPU: pass
``ops.xp``), so each form runs where the logits are.

* ``softmax``: the class probabilities (the weighted sampler, the audit);
* ``log_softmax``: their logarithms (the taggers' decoders, two_task_ner's
  cross entropy and type head);
* ``probability_of``: the probability of one class per row, without the
  table (a span decision reads one or two columns of many candidates);
* ``softmax_parts``: log p, p and 1 - p, accurate near 0 and 1 (the losses).

Every form subtracts a logit of the row itself (its maximum, or the chosen
class's) before ``exp``, so nothing overflows.
"""
from typing import Any, NamedTuple, TypeVar, Union

import numpy
from thinc.api import get_array_module
from thinc.types import ArrayXd, Floats1d, Floats2d, Ints1d

# logits on the device (ops.xp), or already copied to the host (numpy): the
# result is the same kind of array
Logits2dT = TypeVar("Logits2dT", Floats2d, numpy.ndarray)


def softmax(xp: Any, logits: Floats2d) -> Floats2d:
    """Class probabilities per row, shifted by the row's maximum."""
    shifted = logits - xp.max(logits, axis=1, keepdims=True)
    exp = xp.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def log_softmax(xp: Any, logits: Logits2dT) -> Logits2dT:
    """Log class probabilities per row, shifted by the row's maximum. No
    rows give no rows (a batch of empty docs)."""
    shifted = logits - xp.max(logits, axis=1, keepdims=True) if len(logits) else logits
    return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))


def probability_of(xp: Any, logits: Floats2d, column: Union[int, Ints1d]) -> Floats1d:
    """float32 p(c) per row for the class ``column`` (one for every row, or
    one per row): 1 over the sum of exp(z_k - z_c), the row shifted by the
    chosen logit, so the chosen class's own term is exactly exp(0) = 1."""
    if isinstance(column, int):
        chosen = logits[:, column : column + 1]
    else:
        chosen = xp.take_along_axis(logits, column.reshape((-1, 1)), axis=1)
    return (1.0 / xp.exp(logits - chosen).sum(axis=1)).astype("float32")


class SoftmaxParts(NamedTuple):
    """log p, p and 1 - p of a row-wise softmax, each n_rows x n_classes,
    and a boolean mask of one top (arg-max) class per row."""

    log_p: Floats2d
    p: Floats2d
    one_minus_p: Floats2d
    is_top: ArrayXd  # bool, n_rows x n_classes: thinc.types has no bool array type


def softmax_parts(logits: Floats2d) -> SoftmaxParts:
    """A softmax that stays accurate when probabilities are 0 or 1.

    Each row is shifted by its maximum, so log p = z - z_max - log1p(rest),
    where rest sums exp(z_k - z_max) over the non-top entries. Keeping rest
    apart from the top entry's exp(0) = 1 keeps log p_top ~ -rest accurate
    where log(sum) would round it to 0 (in float32 once the logit gap passes
    ~17), and so 1 - p = -expm1(log p) stays accurate for every class, the
    top one included, instead of the 0 that 1 - exp(log p) would give.
    """
    xp = get_array_module(logits)
    n_rows, n_classes = logits.shape
    top = logits.argmax(axis=1)
    # One column per row, by index: ties at the maximum still count once.
    is_top = xp.arange(n_classes)[None, :] == top.reshape((-1, 1))
    shifted = logits - logits[xp.arange(n_rows), top][:, None]
    rest = xp.where(is_top, 0, xp.exp(shifted)).sum(axis=1)
    log_p = (shifted - xp.log1p(rest)[:, None]).astype(logits.dtype, copy=False)
    return SoftmaxParts(log_p, xp.exp(log_p), -xp.expm1(log_p), is_top)

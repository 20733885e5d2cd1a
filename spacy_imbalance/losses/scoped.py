"""The configured losses trained on documents with a label scope: the
configured loss on the rows that allow one class, its partial-label form
(``losses.partial``) on the rows that allow several (``SCOPED_LOSSES``:
cross-entropy, weighted cross-entropy, focal), one normalizer for both, and
a share of each open row trained as O (``scope_o_weight``).
``check_training_scopes`` checks the scopes before training;
``scoped_span_loss`` is ``scoped_loss`` on an update's sampled candidates.
"""
from typing import AbstractSet, Iterable, Optional, Sequence, Tuple, cast

import numpy
from thinc.api import Ops, get_array_module
from thinc.types import ArrayXd, Floats2d, Ints1d

from ..spans.gold import SpanTargets
from ..spans.scopes import selected_rows
from .base import DeviceLoss, TokenLoss, check_gold_ids, pow_clipped
from .cross_entropy import CrossEntropy, WeightedCrossEntropy
from .focal import FocalLoss
from .partial import allowed_mask, partial_label_loss_on_device, partial_label_terms, scope_columns

__all__ = ["SCOPED_LOSSES", "check_scoped_loss", "check_training_scopes", "check_o_weight", "scoped_loss", "scoped_span_loss"]


# exact types, not subclasses: a subclass may change the per-row terms that
# the partial form below generalises
SCOPED_LOSSES: Tuple[type, ...] = (CrossEntropy, WeightedCrossEntropy, FocalLoss)


def check_scoped_loss(loss: TokenLoss, owner: str) -> None:
    """A ValueError naming ``loss`` unless it has a partial-label form.

    Only a sum of per-row terms of one probability has one: cross-entropy
    (-log p_A), weighted cross-entropy and focal loss. Dice is a ratio over
    the batch, and MoM's extra term and MoMLossV2's normalizer need each
    row's one class.
    """
    if type(loss) in SCOPED_LOSSES:
        return
    raise ValueError(
        f"{owner}: the training data has label scopes (documents that annotate only some entity types), "
        f"and the loss {type(loss).__name__} has no partial-label form (a ratio over the batch or a "
        "per-sentence loss cannot sum the probability of 'O or a type outside the scope'); use "
        "spacy-imbalance.CrossEntropy.v1, WeightedCrossEntropy.v1 or FocalLoss.v1, or train without scopes"
    )


def check_training_scopes(labels: Sequence[str], scopes: Iterable[AbstractSet[str]], loss: TokenLoss, owner: str) -> None:
    """Before training: every scope of the training data names labels of
    the component (``labels``: the type of each column after O), and the
    loss trains the scopes that leave a type out; a ValueError naming
    ``owner`` and the scope otherwise."""
    for scope in sorted(scopes, key=sorted):
        try:
            leaves_out = bool(scope_columns(labels, scope).any())
        except ValueError as err:
            raise ValueError(f"{owner}: the training data's {err}") from None
        if leaves_out:
            check_scoped_loss(loss, owner)


def scoped_loss(
    loss: TokenLoss,
    logits: Floats2d,
    gold: Ints1d,
    out_of_scope: numpy.ndarray,
    *,
    known_negative: Optional[numpy.ndarray] = None,
    o_weight: float = 0.0,
    owner: str = "the component",
) -> Tuple[Floats2d, DeviceLoss]:
    """d loss / d logits and the loss (on the device) of a batch whose rows
    may allow several classes.

    loss (TokenLoss): the configured loss, one of SCOPED_LOSSES (checked:
        a ValueError naming ``owner`` otherwise).
    logits (Floats2d): n_rows x (K + 1), column 0 = O, on the device.
    gold (Ints1d): class ids on the host: -1 missing, 0 not annotated as an
        entity, else a class.
    out_of_scope (numpy.ndarray): host bool, n_rows x (K + 1) (``scope_rows``).
    known_negative (Optional[numpy.ndarray]): host bool per row, rows known
        not to be entities: O alone, whatever the scope (``allowed_mask``).
    o_weight (float): in [0, 1], the share of a row that allows several
        classes trained as O by ``loss`` itself, the rest by the partial-label
        form: 0 the marginal likelihood alone, 1 the row as O, as if its
        document annotated every type (the naive merge). Partial labels
        alone never say that an ordinary word is no entity when every
        corpus leaves some type out (each allows O *or* the other types);
        a share of O says it, at the price of some missed out-of-scope
        entities taught as O.

    A row that allows one class is trained by ``loss`` itself, one that
    allows several by its partial-label form; both over the normalizer
    ``loss`` gives the whole batch (every trained row), so that the loss
    and its scale are today's where no row allows several classes.
    """
    check_scoped_loss(loss, owner)
    check_o_weight(o_weight, owner)
    allowed = numpy.asarray(allowed_mask(gold, out_of_scope, known_negative=known_negative))  # host gold: a host mask
    several = allowed.sum(axis=1) > 1
    normalizer = loss.default_normalizer(gold)
    single = cast(Ints1d, numpy.where(several, -1, numpy.asarray(gold)).astype(gold.dtype, copy=False))
    d_single, single_loss = loss.compute_gold(logits, check_gold_ids(logits, single), normalizer=normalizer)
    if not several.any():
        return d_single, single_loss
    d_open, open_loss = _open_rows(loss, logits, allowed & several[:, None], normalizer)
    if o_weight > 0:
        as_o = cast(Ints1d, numpy.where(several, 0, -1).astype(gold.dtype, copy=False))
        d_o, o_loss = loss.compute_gold(logits, check_gold_ids(logits, as_o), normalizer=normalizer)
        d_open = d_open * (1 - o_weight) + d_o * o_weight
        open_loss = open_loss.scaled(1 - o_weight).plus(o_loss.scaled(o_weight))
    # the two gradients are zero on each other's rows: the sum is exact
    return d_single + d_open, single_loss.plus(open_loss)


def check_o_weight(o_weight: float, owner: str) -> None:
    """A ValueError naming ``owner``'s setting unless 0 <= o_weight <= 1."""
    if not 0.0 <= o_weight <= 1.0:
        raise ValueError(
            f"{owner}: scope_o_weight must be in [0, 1] (the share of an unannotated row of a scoped document "
            f"taught as 'no entity'), got {o_weight}"
        )


def _open_rows(loss: TokenLoss, logits: Floats2d, allowed: numpy.ndarray, normalizer: float) -> Tuple[Floats2d, DeviceLoss]:
    """The partial-label terms of the rows that allow several classes (the
    others allow none here), in ``loss``'s form, over ``normalizer``."""
    if type(loss) is CrossEntropy:
        open_loss, d_open = partial_label_loss_on_device(logits, cast(ArrayXd, allowed), normalizer=normalizer)
        return d_open, open_loss
    if type(loss) is WeightedCrossEntropy:
        if loss.weights is None:
            raise RuntimeError("WeightedCrossEntropy needs class counts from the training data: call initialize(class_counts) first")
        weight = float(loss.weights[0])  # the O weight: the row is "not annotated", as an O row was
        open_loss, d_open = partial_label_loss_on_device(logits, cast(ArrayXd, allowed), normalizer=normalizer)
        return d_open * weight, open_loss.scaled(weight)
    if type(loss) is FocalLoss:
        return _focal_open_rows(loss, logits, allowed, normalizer)
    check_scoped_loss(loss, "scoped_loss")
    raise AssertionError("unreachable")  # check_scoped_loss raised


def _focal_open_rows(loss: FocalLoss, logits: Floats2d, allowed: numpy.ndarray, normalizer: float) -> Tuple[Floats2d, DeviceLoss]:
    """Focal loss of the allowed set: -a (1 - p_A)^gamma log p_A per row.

    It is a function of p_A alone, as focal loss is of p_c, so its gradient
    is focal's factor (1 - p)^gamma - gamma p (1 - p)^(gamma - 1) log p at
    p = p_A times the gradient of -log p_A (``partial_label_terms``). The row
    counts as O for alpha-balancing: a = 1 - alpha when O is the majority
    class (FocalLoss's default), alpha otherwise, 1 without alpha.
    """
    xp = get_array_module(logits)
    device_allowed = xp.asarray(allowed)  # one upload
    neg_log_p, d_neg_log_p = partial_label_terms(logits, device_allowed)
    # 1 - p_A from -log p_A with expm1: accurate when p_A is near 1
    one_minus = -xp.expm1(-neg_log_p)
    p_allowed = xp.exp(-neg_log_p)
    modulator = one_minus**loss.gamma
    slope = modulator + loss.gamma * p_allowed * neg_log_p * pow_clipped(one_minus, loss.gamma - 1)
    scale = 1.0 if loss.alpha is None else (1 - loss.alpha if loss.majority_class == 0 else loss.alpha)
    present = device_allowed.any(axis=1)
    # where() rather than a product with the mask: rows not trained here are exactly zero
    total = xp.where(present, scale * modulator * neg_log_p, 0).sum()
    grad = xp.where(present[:, None], (scale * slope)[:, None] * d_neg_log_p / normalizer, 0)
    return grad.astype(logits.dtype, copy=False), DeviceLoss.term(total, normalizer)


def scoped_span_loss(
    ops: Ops, loss: TokenLoss, targets: SpanTargets, logits: Floats2d, selected: Ints1d, *, o_weight: float, owner: str
) -> Tuple[Floats2d, float]:
    """(d loss / d logits, loss) of the candidates ``selected`` (the rows of
    ``logits``) of a batch with a scope that leaves a type out: ``loss`` in
    its partial-label form on the open candidates, ``o_weight`` of each
    also trained as O (``losses.scoped.scoped_loss``)."""
    gold, known, out_of_scope = selected_rows(ops, targets, selected)
    d_logits, device_loss = scoped_loss(loss, logits, gold, out_of_scope, known_negative=known, o_weight=o_weight, owner=owner)
    return d_logits, device_loss.to_float()

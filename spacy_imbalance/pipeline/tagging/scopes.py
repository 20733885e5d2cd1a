"""Partial-label training of a token tagger on documents with a label scope
(``spacy_imbalance.corpus.scopes``): which rows a batch leaves open, and the
loss that trains them.

A token of a scoped document that is not annotated as an entity (gold O) may
be O or a tag of any type outside the scope; its loss is -log of the summed
probability of those tags (``losses.partial``). A token annotated as an
entity allows its tag alone and is trained by the configured loss, as
today. Both kinds of row share one normalizer, the one the configured loss
would use for the whole batch (every trained row), so that the loss and its
scale stay those of today where a scope covers every type.

Only losses that are a sum of per-row terms of one probability have such a
form: cross-entropy (-log p_A), weighted cross-entropy (the open row weighs
what an O row weighs, w_O: the row is "not annotated", as O was) and focal
loss (-a_O (1 - p_A)^gamma log p_A, focal of the allowed set's
probability). Dice is a ratio over the batch and MoM's extra term and
MoMLossV2's normalizer need each row's one class; they are refused.
"""
from typing import AbstractSet, List, Optional, Sequence, Tuple, cast

import numpy
from thinc.api import get_array_module
from thinc.types import ArrayXd, Floats2d, Ints1d

from ...losses import CrossEntropy, FocalLoss, TokenLoss, WeightedCrossEntropy
from ...losses._base import DeviceLoss, check_gold_ids, pow_clipped
from ...losses.partial import allowed_mask, partial_label_loss_on_device, partial_label_terms, scope_columns

__all__ = ["SCOPED_LOSSES", "check_scoped_loss", "leaves_types_out", "tag_scope_rows", "scoped_tag_loss"]

# exact types, not subclasses: a subclass may change the per-row terms that
# the partial form below generalises
SCOPED_LOSSES: Tuple[type, ...] = (CrossEntropy, WeightedCrossEntropy, FocalLoss)


def check_scoped_loss(loss: TokenLoss, owner: str) -> None:
    """A ValueError naming ``loss`` unless it has a partial-label form."""
    if type(loss) in SCOPED_LOSSES:
        return
    raise ValueError(
        f"{owner}: the training data has label scopes (documents that annotate only some entity types), "
        f"and the loss {type(loss).__name__} has no partial-label form (a ratio over the batch or a "
        "per-sentence loss cannot sum the probability of 'O or a type outside the scope'); use "
        "spacy-imbalance.CrossEntropy.v1, WeightedCrossEntropy.v1 or FocalLoss.v1, or train without scopes"
    )


def tag_types(tags: Sequence[str]) -> List[str]:
    """The entity type of each tag column after O: B-X, I-X, L-X and U-X are X."""
    return [tag[2:] for tag in tags[1:]]


def leaves_types_out(tags: Sequence[str], scope: Optional[AbstractSet[str]]) -> bool:
    """Whether a document of ``scope`` leaves some tag's type unannotated
    (a ValueError, from ``scope_columns``, for a type the tags lack)."""
    return bool(scope_columns(tag_types(tags), scope).any())


def tag_scope_rows(
    tags: Sequence[str], scopes: Sequence[Optional[AbstractSet[str]]], lengths: Sequence[int], owner: str
) -> Optional[numpy.ndarray]:
    """Per token row (``lengths`` rows per document, in order), the tag
    columns outside its document's scope: bool (sum(lengths), n_tags), on
    the host; None when no document leaves a type out, so that the caller
    trains exactly as without scopes."""
    types = tag_types(tags)
    table = numpy.zeros((len(scopes), len(tags)), dtype=bool)
    for i, scope in enumerate(scopes):
        try:
            table[i] = scope_columns(types, scope)
        except ValueError as err:
            raise ValueError(f"{owner}: example {i} of the batch: {err}") from None
    if not table.any():
        return None
    return numpy.repeat(table, numpy.asarray(lengths, dtype="int64"), axis=0)


def scoped_tag_loss(
    loss: TokenLoss, logits: Floats2d, gold: Ints1d, out_of_scope: numpy.ndarray
) -> Tuple[Floats2d, DeviceLoss]:
    """d loss / d logits and the loss (on the device) of a batch whose rows
    may allow several tags.

    loss (TokenLoss): the configured loss, one of SCOPED_LOSSES.
    logits (Floats2d): n_rows x n_tags, column 0 = O, on the device.
    gold (Ints1d): tag ids on the host: -1 missing, 0 O, else a tag.
    out_of_scope (numpy.ndarray): host bool, n_rows x n_tags (``tag_scope_rows``).
    """
    allowed = numpy.asarray(allowed_mask(gold, out_of_scope))  # host gold: a host mask
    several = allowed.sum(axis=1) > 1
    normalizer = loss.default_normalizer(gold)
    single = cast(Ints1d, numpy.where(several, -1, numpy.asarray(gold)).astype(gold.dtype, copy=False))
    d_single, single_loss = loss.compute_gold(logits, check_gold_ids(logits, single), normalizer=normalizer)
    if not several.any():
        return d_single, single_loss
    d_open, open_loss = _open_rows(loss, logits, allowed & several[:, None], normalizer)
    # the two gradients are zero on each other's rows: the sum is exact
    return d_single + d_open, single_loss.plus(open_loss)


def _open_rows(loss: TokenLoss, logits: Floats2d, allowed: numpy.ndarray, normalizer: float) -> Tuple[Floats2d, DeviceLoss]:
    """The partial-label terms of the rows that allow several tags (the
    others allow none here), in ``loss``'s form, over ``normalizer``."""
    if type(loss) is CrossEntropy:
        open_loss, d_open = partial_label_loss_on_device(logits, cast(ArrayXd, allowed), normalizer=normalizer)
        return d_open, open_loss
    if type(loss) is WeightedCrossEntropy:
        if loss.weights is None:
            raise RuntimeError("WeightedCrossEntropy needs class counts from the training data: call initialize(class_counts) first")
        weight = float(loss.weights[0])  # the O weight
        open_loss, d_open = partial_label_loss_on_device(logits, cast(ArrayXd, allowed), normalizer=normalizer)
        return d_open * weight, open_loss.scaled(weight)
    if type(loss) is FocalLoss:
        return _focal_open_rows(loss, logits, allowed, normalizer)
    check_scoped_loss(loss, "scoped_tag_loss")
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

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

The losses with such a form, and the form each takes, are
``losses.scoped``'s (``SCOPED_LOSSES``, ``scoped_loss``), shared with
``sampled_spancat``; here are the tags' side of it.
"""
from typing import AbstractSet, List, Optional, Sequence, Tuple

import numpy
from thinc.types import Floats2d, Ints1d

from ...losses import TokenLoss
from ...losses.base import DeviceLoss
from ...losses.partial import scope_columns, scope_rows
from ...losses.scoped import SCOPED_LOSSES, check_scoped_loss, scoped_loss

__all__ = ["SCOPED_LOSSES", "check_scoped_loss", "leaves_types_out", "tag_scope_rows", "scoped_tag_loss"]


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
    return scope_rows(tag_types(tags), scopes, lengths, owner)


def scoped_tag_loss(
    loss: TokenLoss, logits: Floats2d, gold: Ints1d, out_of_scope: numpy.ndarray, *, o_weight: float = 0.0
) -> Tuple[Floats2d, DeviceLoss]:
    """d loss / d logits and the loss (on the device) of a batch whose rows
    may allow several tags (``losses.scoped.scoped_loss``).

    loss (TokenLoss): the configured loss, one of SCOPED_LOSSES.
    logits (Floats2d): n_rows x n_tags, column 0 = O, on the device.
    gold (Ints1d): tag ids on the host: -1 missing, 0 O, else a tag.
    out_of_scope (numpy.ndarray): host bool, n_rows x n_tags (``tag_scope_rows``).
    o_weight (float): the share of an open row trained as O (``scoped_loss``).
    """
    return scoped_loss(loss, logits, gold, out_of_scope, o_weight=o_weight, owner="scoped_tag_loss")

"""Token-level losses for imbalanced NER, as thinc ``Loss`` classes (``thinc_losses``).

Every loss takes logits (``Floats2d``, n_tokens x n_classes, unnormalised
scores) and gold class ids (``Ints1d``, length n_tokens). A negative gold id
means "missing": the token adds no loss and its gradient row is exactly zero.
Class id 0 is the majority class O by convention (``majority_class``).
Gradients are d loss / d logits, as thinc's softmax layer expects.

Reduction, the same for every loss here (``TokenLoss.compute``):

* Token-decomposable losses (``CrossEntropy``, ``WeightedCrossEntropy``,
  ``FocalLoss``) sum the per-token losses over non-missing tokens and divide
  by ``normalizer``. By default that is the number of non-missing tokens when
  ``normalize=True`` (a token mean) and 1 when ``normalize=False`` (a sum).
  Class weights (WCE, focal ``alpha``) rescale per-token losses only: the mean
  is over tokens, not over the sum of the weights.
* ``DiceLoss`` is a ratio, so it is scale-free: it ignores ``normalizer``.
* ``MoMLoss`` (v1) divides both of its terms by the normalizer of the full
  batch, so over dice its extra term is simply dice over the O tokens.
  ``MoMLossV2`` (v2) divides the O-only term as the paper's Eq. 1 and 3 do,
  by N·M: N sentences in the batch, each padded to M = ``max_length`` tokens
  (the longest sentence of the dataset, 128 in the paper), not by the batch's
  token count; it needs the sentence lengths (``compute_sequences``).
* A batch with no non-missing tokens gives loss 0.0 and a zero gradient.

``AUCMarginLoss`` (``auc_margin.py``) is not a token loss: it takes sigmoid
scores and 0/1 labels, one binary task per column (Ints2d, negative =
missing), plus per-task parameters a, b and dual variables alpha, and returns
their gradients too. Per task it takes conditional means over positive and
negative tokens ("conditional") or LibAUC's p-weighted means over all
non-missing tokens ("libauc"); its loss is the task_weights-weighted sum over
tasks. Its module docstring gives the details.

``two_task.py`` holds two_task_ner's other losses (binary cross entropy per
task, softmax cross entropy over a head's columns), and ``base.py`` what every
loss and the components build on (``TokenLoss``, ``DeviceLoss``, the checks).

``partial.py`` is no configurable loss but the arithmetic of partial-label
training (label scopes, ``spacy_imbalance.corpus.scopes``): each row has a
mask of allowed classes and the loss is -log of their summed probability,
which equals cross-entropy where one class is allowed.
"""
from .base import TokenLoss
from .auc_margin import AUCMarginLoss, AUCMarginResult, configure_auc_margin_loss_v1
from .cross_entropy import (
    CrossEntropy,
    WeightedCrossEntropy,
    configure_cross_entropy_v1,
    configure_weighted_cross_entropy_v1,
)
from .dice import DiceLoss, configure_dice_loss_v1
from .focal import FocalLoss, configure_focal_loss_v1
from .mom import MoMLoss, MoMLossV2, configure_mom_loss_v1, configure_mom_loss_v2
from .partial import allowed_mask, partial_label_loss, partial_label_loss_on_device, scope_columns, scope_table

__all__ = [
    "TokenLoss",
    "CrossEntropy",
    "WeightedCrossEntropy",
    "FocalLoss",
    "DiceLoss",
    "MoMLoss",
    "MoMLossV2",
    "AUCMarginLoss",
    "AUCMarginResult",
    "configure_cross_entropy_v1",
    "configure_weighted_cross_entropy_v1",
    "configure_focal_loss_v1",
    "configure_dice_loss_v1",
    "configure_mom_loss_v1",
    "configure_mom_loss_v2",
    "configure_auc_margin_loss_v1",
    "scope_columns",
    "scope_table",
    "allowed_mask",
    "partial_label_loss",
    "partial_label_loss_on_device",
]

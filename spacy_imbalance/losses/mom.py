"""Majority-or-minority (MoM) learning (MoM paper, Sec. 2.2, Eq. 1-2)."""
from typing import List, Optional, Sequence, Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats2d, Ints1d

from ._base import TokenLoss, check_inputs, check_setting
from .cross_entropy import CrossEntropy

__all__ = ["MoMLoss", "configure_mom_loss_v1"]


class MoMLoss(TokenLoss):
    """L = lambda_ * L_base + (1 - lambda_) * L_MoM, where L_MoM is the base
    loss over the tokens whose gold class is the majority class O only (the
    other tokens count as missing for that term).

    Both terms are divided by the normalizer of the full batch: Eq. 1 divides
    the O-only sum by M, the number of tokens, not by the number of O tokens.
    The base loss's own ``normalize`` setting decides what that normalizer is.
    Over ``DiceLoss``, which ignores the normalizer, L_MoM is dice over the O
    tokens alone.

    lambda_ (float): The weight of the base loss, in [0, 1]; 1 gives the base loss.
    base (Optional[TokenLoss]): The loss l of Eq. 1; None means ``CrossEntropy()``.
    majority_class (int): The id of the majority class O.
    """

    def __init__(self, *, lambda_: float = 0.5, base: Optional[TokenLoss] = None, majority_class: int = 0) -> None:
        check_setting("lambda_", lambda_, low=0, high=1, note=" (1 gives the base loss alone)")
        # confection does not check what a nested loss block resolves to, so check here.
        if base is not None and not isinstance(base, TokenLoss):
            raise TypeError(
                f"base must be a spacy-imbalance token loss (a TokenLoss, e.g. "
                f"spacy-imbalance.FocalLoss.v1), got {type(base).__name__}"
            )
        if majority_class < 0:
            raise ValueError(f"majority_class must be a class id >= 0, got majority_class={majority_class}")
        self.lambda_ = lambda_
        self.base: TokenLoss = base if base is not None else CrossEntropy()
        self.majority_class = majority_class

    @property
    def needs_class_counts(self) -> bool:
        return self.base.needs_class_counts

    @property
    def class_counts(self) -> Optional[List[int]]:
        return self.base.class_counts

    def initialize(self, class_counts: Sequence[int]) -> None:
        self.base.initialize(class_counts)

    def default_normalizer(self, truths: Ints1d) -> float:
        return self.base.default_normalizer(truths)

    def compute(
        self, logits: Floats2d, truths: Ints1d, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, float]:
        truths = check_inputs(logits, truths)
        if self.majority_class >= logits.shape[1]:
            raise ValueError(
                f"majority_class={self.majority_class} is out of range for logits of shape {logits.shape}"
            )
        if normalizer is None:
            normalizer = self.base.default_normalizer(truths)
        # At either end one term has weight 0: skip it rather than pay for a
        # second pass over the batch.
        if self.lambda_ == 1:
            return self.base.compute(logits, truths, normalizer=normalizer)
        xp = get_array_module(logits)
        majority_only = xp.where(truths == self.majority_class, truths, -1)
        mom_grad, mom_loss = self.base.compute(logits, majority_only, normalizer=normalizer)
        if self.lambda_ == 0:
            return mom_grad, mom_loss
        grad, loss = self.base.compute(logits, truths, normalizer=normalizer)
        weight = self.lambda_
        return weight * grad + (1 - weight) * mom_grad, weight * loss + (1 - weight) * mom_loss


@registry.losses("spacy-imbalance.MoMLoss.v1")
def configure_mom_loss_v1(
    *, lambda_: float = 0.5, base: Optional[TokenLoss] = None, majority_class: int = 0
) -> MoMLoss:
    return MoMLoss(lambda_=lambda_, base=base, majority_class=majority_class)

"""Self-adjusting dice loss (Li et al. 2020, "Dice loss for data-imbalanced NLP tasks")."""
from typing import Optional, Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats2d, Ints1d

from ._base import TokenLoss, check_inputs, check_normalizer, one_hot, pow_clipped, softmax_parts

__all__ = ["DiceLoss", "configure_dice_loss_v1"]


class DiceLoss(TokenLoss):
    """Self-adjusting dice loss, one-vs-rest per class at the set (batch)
    level with a non-squared denominator, averaged over classes (as in
    ShannonAI's dice_loss_for_NLP):

        q_ik = (1 - p_ik)^alpha p_ik
        D_k = 1 - (2 sum_i q_ik y_ik + gamma) / (sum_i q_ik + sum_i y_ik + gamma)
        L = (1/K) sum_k D_k

    Sums run over non-missing tokens only. The loss is a ratio, so it is
    scale-free and ``compute`` ignores ``normalizer``. Because (1 - p)^alpha
    shrinks confident probabilities, a perfect prediction has loss near 0
    only for alpha = 0 (plain dice) and gamma small next to the class counts.

    alpha (float): The self-adjusting exponent, >= 0 (0 is plain soft dice).
    gamma (float): Additive smoothing, > 0, so a class absent from the batch
        (gold and predicted) never divides by 0.
    """

    def __init__(self, *, alpha: float = 0.1, gamma: float = 1.0) -> None:
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0 (0 gives plain dice), got alpha={alpha}")
        if not gamma > 0:
            raise ValueError(
                f"gamma must be > 0: the smoothing keeps a class absent from the batch "
                f"from dividing by 0, got gamma={gamma}"
            )
        self.alpha = alpha
        self.gamma = gamma

    def compute(
        self, logits: Floats2d, truths: Ints1d, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, float]:
        truths = check_inputs(logits, truths)
        if normalizer is not None:
            check_normalizer(normalizer)
        xp = get_array_module(logits)
        present = (truths >= 0)[:, None]
        if not bool(present.any()):
            return xp.zeros_like(logits), 0.0
        n_classes = logits.shape[1]
        parts = softmax_parts(logits)
        p = parts.p
        # Missing rows are zeroed before any sum, so they take no part in the ratio.
        y = xp.where(present, one_hot(xp.where(present[:, 0], truths, 0), n_classes, logits), 0)
        q = xp.where(present, parts.one_minus_p**self.alpha * p, 0)
        numerator = 2 * (q * y).sum(axis=0) + self.gamma
        denominator = q.sum(axis=0) + y.sum(axis=0) + self.gamma
        loss = float((1 - numerator / denominator).mean())
        d_q = (numerator / denominator**2 - 2 * y / denominator) / n_classes
        # dq/dp = (1 - p)^alpha - alpha p (1 - p)^(alpha - 1). 1 - p is 0 only
        # where log p = 0, i.e. every other p in the row underflowed to 0, so
        # the clipped power stays finite and the softmax below zeroes it.
        d_p = d_q * (parts.one_minus_p**self.alpha - self.alpha * p * pow_clipped(parts.one_minus_p, self.alpha - 1))
        # Back through the softmax: dL/dz_ij = p_ij (g_ij - sum_k g_ik p_ik).
        # For the top class use the equal g_ij (1 - p_ij) - sum_{k != j} g_ik p_ik:
        # with p_ij rounded to 1 and g_ij large, the plain difference cancels to 0.
        weighted = d_p * p
        others = xp.where(parts.is_top, 0, weighted).sum(axis=1, keepdims=True)
        top_grad = p * (d_p * parts.one_minus_p - others)
        grad = xp.where(parts.is_top, top_grad, p * (d_p - weighted.sum(axis=1, keepdims=True)))
        return xp.where(present, grad, 0).astype(logits.dtype, copy=False), loss


@registry.losses("spacy-imbalance.DiceLoss.v1")
def configure_dice_loss_v1(*, alpha: float = 0.1, gamma: float = 1.0) -> DiceLoss:
    return DiceLoss(alpha=alpha, gamma=gamma)

"""Self-adjusting dice loss (Li et al. 2020, "Dice loss for data-imbalanced NLP tasks")."""
from typing import Optional, Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats2d

from ..decisions.softmax import softmax_parts
from .base import MAX_FLOAT32_SETTING, DeviceLoss, GoldIds, TokenLoss, check_normalizer, check_setting, one_hot

__all__ = ["DiceLoss", "configure_dice_loss_v1", "MIN_GAMMA"]

# The smallest smoothing that keeps float32 gradients finite: d loss / d q
# reaches 1 / (gamma K) for a class absent from the batch, and the gradient
# sums a few such terms per class, against float32's maximum of 3.4e38.
MIN_GAMMA = 1e-37


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

    alpha (float): The self-adjusting exponent, in [0, 1e38] (0 is plain soft
        dice; above, float32 overflows).
    gamma (float): Additive smoothing, in [``MIN_GAMMA`` (1e-37), 1e38], so a
        class absent from the batch (gold and predicted) never divides by 0.
    """

    def __init__(self, *, alpha: float = 0.1, gamma: float = 1.0) -> None:
        check_setting(
            "alpha",
            alpha,
            low=0,
            high=MAX_FLOAT32_SETTING,
            note=" (0 gives plain dice; above, float32 gradients are not finite)",
            prefix="DiceLoss: ",
        )
        check_setting(
            "gamma",
            gamma,
            low=MIN_GAMMA,
            high=MAX_FLOAT32_SETTING,
            note=(
                " (the smoothing keeps a class absent from the batch from dividing by 0, and the "
                "gradient, up to 1 / gamma, and the sums with gamma must stay within float32)"
            ),
            prefix="DiceLoss: ",
        )
        self.alpha = alpha
        self.gamma = gamma

    def compute_gold(
        self, logits: Floats2d, gold: GoldIds, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, DeviceLoss]:
        if normalizer is not None:
            check_normalizer(normalizer)
        xp = get_array_module(logits)
        if gold.n_present == 0:
            return xp.zeros_like(logits), DeviceLoss()
        present = (gold.device >= 0)[:, None]
        n_classes = logits.shape[1]
        parts = softmax_parts(logits)
        p, one_minus_p = parts.p, parts.one_minus_p
        # Missing rows are zeroed before any sum, so they take no part in the ratio.
        y = xp.where(present, one_hot(xp.where(present[:, 0], gold.device, 0), n_classes, logits), 0)
        modulator = one_minus_p**self.alpha
        q = xp.where(present, modulator * p, 0)
        denominator = q.sum(axis=0) + y.sum(axis=0) + self.gamma
        ratio = (2 * (q * y).sum(axis=0) + self.gamma) / denominator
        loss = DeviceLoss.term((1 - ratio).mean())
        # dL/dq. The ratio is in [0, 1], so this is at most 3 / gamma; dividing
        # by the denominator twice, not by its square, which underflows to 0
        # in float32 once gamma < 1e-19.
        d_q = (ratio - 2 * y) / denominator / n_classes
        # With dq/dp = (1 - p)^(alpha - 1) ((1 - p) - alpha p) and the softmax,
        # dL/dz_j = w_j - p_j sum_k w_k, where w_k = d_q p_k dq/dp_k. For the
        # top class (1 - p)^(alpha - 1) is huge (alpha < 1, 1 - p ~ 0): times
        # d_q ~ 1 / gamma it overflows float32 and meets a p of 0 (nan). So
        # only s = w (1 - p), finite for every class, is formed; the top
        # class's w enters the others' gradient as s_top p_j / (1 - p_top),
        # with p_j <= 1 - p_top, and its own as s_top - p_top sum_{k != top} w_k.
        s = d_q * p * modulator * (one_minus_p - self.alpha * p)
        # a non-top class has p <= 1/2, so 1 - p >= 1/2 divides safely
        w_others = xp.where(parts.is_top, 0, s / xp.where(parts.is_top, 1, one_minus_p))
        s_top = xp.where(parts.is_top, s, 0).sum(axis=1, keepdims=True)
        # p_j / (1 - p_top) in [0, 1]; 1 - p_top is 0 only where every other
        # p underflowed to 0
        top_rest = xp.where(parts.is_top, one_minus_p, 0).sum(axis=1, keepdims=True)
        share = xp.where(parts.is_top, 0, p) / xp.maximum(top_rest, xp.finfo(p.dtype).tiny)
        grad = xp.where(parts.is_top, s, w_others - s_top * share) - p * w_others.sum(axis=1, keepdims=True)
        return xp.where(present, grad, 0).astype(logits.dtype, copy=False), loss


@registry.losses("spacy-imbalance.DiceLoss.v1")
def configure_dice_loss_v1(*, alpha: float = 0.1, gamma: float = 1.0) -> DiceLoss:
    return DiceLoss(alpha=alpha, gamma=gamma)

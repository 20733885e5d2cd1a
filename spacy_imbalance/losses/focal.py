"""Softmax focal loss (Lin et al. 2017), with optional alpha-balancing."""
from typing import Optional, Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d, Ints1d

from ..decisions.softmax import SoftmaxParts
from .base import MAX_FLOAT32_SETTING, TokenwiseLoss, check_setting, p_minus_one_hot, pow_clipped

__all__ = ["FocalLoss", "configure_focal_loss_v1"]


class FocalLoss(TokenwiseLoss):
    """Softmax focal loss: per token -a_c (1 - p_c)^gamma log p_c.

    The gradient is a_c * A * (p - onehot(c)) with
    A = (1 - p_c)^gamma - gamma p_c (1 - p_c)^(gamma - 1) log p_c
    (Sentence-level resampling paper, Appendix B, Eq. 15). With gamma = 0 and
    alpha None this is exactly ``CrossEntropy``.

    gamma (float): Focusing parameter, in [0, 1e38] (float32's range); larger
        values down-weight easy tokens.
    alpha (Optional[float]): None for no balancing (a_c = 1). Otherwise a_c is
        alpha for entity classes and 1 - alpha for the majority class, the
        alpha-balancing of Lin et al. with alpha weighting the rare side.
    normalize (bool): Divide by the number of non-missing tokens (True) or sum (False).
    majority_class (int): The id of the majority class O.
    """

    def __init__(
        self,
        *,
        gamma: float = 2.0,
        alpha: Optional[float] = None,
        normalize: bool = True,
        majority_class: int = 0,
    ) -> None:
        super().__init__(normalize=normalize)
        check_setting(
            "gamma",
            gamma,
            low=0,
            high=MAX_FLOAT32_SETTING,
            note=" (0 gives plain cross-entropy; above, float32 gradients are not finite)",
            prefix="FocalLoss: ",
        )
        if alpha is not None:
            check_setting("alpha", alpha, low=0, high=1, note=" (or None for no balancing)", prefix="FocalLoss: ")
        if majority_class < 0:
            raise ValueError(f"majority_class must be a class id >= 0, got majority_class={majority_class}")
        self.gamma = gamma
        self.alpha = alpha
        self.majority_class = majority_class

    def token_terms(self, parts: SoftmaxParts, gold: Ints1d) -> Tuple[Floats1d, Floats2d]:
        xp = get_array_module(parts.p)
        rows = xp.arange(parts.p.shape[0])
        log_p_gold = parts.log_p[rows, gold]
        p_gold = parts.p[rows, gold]
        one_minus_gold = parts.one_minus_p[rows, gold]
        modulator = one_minus_gold**self.gamma
        # gamma * p log p is bounded (|p log p| <= 1/e) and is exactly 0 where
        # 1 - p_c is 0 (log p_c = 0 there), so the clipped power stays finite
        # and never meets inf * 0, also for gamma < 1.
        slope = modulator - self.gamma * p_gold * log_p_gold * pow_clipped(one_minus_gold, self.gamma - 1)
        scale = self._alpha_weights(gold, like=p_gold)
        token_losses = -(scale * modulator) * log_p_gold
        d_logits = (scale * slope)[:, None] * p_minus_one_hot(parts, gold)
        return token_losses, d_logits

    def _alpha_weights(self, gold: Ints1d, *, like: Floats1d) -> Floats1d:
        xp = get_array_module(like)
        if self.alpha is None:
            return xp.ones_like(like)
        return xp.where(gold == self.majority_class, 1 - self.alpha, self.alpha).astype(like.dtype, copy=False)


@registry.losses("spacy-imbalance.FocalLoss.v1")
def configure_focal_loss_v1(
    *, gamma: float = 2.0, alpha: Optional[float] = None, normalize: bool = True, majority_class: int = 0
) -> FocalLoss:
    return FocalLoss(gamma=gamma, alpha=alpha, normalize=normalize, majority_class=majority_class)

"""The old name of ``losses.base`` (kept for imports written before it was
public)."""
from .base import (  # noqa: F401
    MAX_FLOAT32_SETTING,
    DeviceLoss,
    GoldIds,
    SoftmaxParts,
    TokenLoss,
    TokenwiseLoss,
    check_gold_ids,
    check_normalizer,
    check_setting,
    check_span_loss,
    on_host,
    one_hot,
    p_minus_one_hot,
    pow_clipped,
    softmax_parts,
)

"""What a training run needs besides its pipeline: the optimizer that gives a
fine-tuned encoder a rate of its own, a warm-up that scales with the budget,
and the checks every numeric training setting and every step's loss pass
(``checks``)."""
from .optimizer import SplitRateOptimizer, create_split_rate_adam_v1, is_torch_param
from .schedules import create_warmup_share_linear_v1

__all__ = ["SplitRateOptimizer", "create_split_rate_adam_v1", "create_warmup_share_linear_v1", "is_torch_param"]

"""What a training run needs besides its pipeline: the optimizer that gives a
fine-tuned encoder a rate of its own, a warm-up that scales with the budget,
the checks every numeric training setting and every step's loss pass
(``checks``), and a console logger whose output a person can follow
(``logger``)."""
from .logger import create_console_logger_v1
from .optimizer import SplitRateOptimizer, create_split_rate_adam_v1, is_torch_param
from .schedules import create_warmup_share_linear_v1

__all__ = [
    "SplitRateOptimizer",
    "create_console_logger_v1",
    "create_split_rate_adam_v1",
    "create_warmup_share_linear_v1",
    "is_torch_param",
]

"""``spacy-imbalance.warmup_share_linear.v1``: thinc's ``warmup_linear.v1``
with the warm-up given as a share of the budget, so that a shorter or longer
``training.max_steps`` keeps the schedule's shape (a fixed 250-step warm-up
inside a 400-step budget left the fine-tuned configs at a fraction of their
rate for most of training)."""
from typing import Iterator

from spacy.util import registry

from .checks import FLOAT32_LIMIT, check_number


@registry.schedules("spacy-imbalance.warmup_share_linear.v1")
def create_warmup_share_linear_v1(initial_rate: float, total_steps: int, warmup_share: float = 0.1) -> Iterator[float]:
    """Linear warm-up from 0 over ``warmup_share`` of ``total_steps``, then
    linear decay to 0 at ``total_steps`` (a generator, as thinc 8's
    schedules are)."""
    rate = check_number("warmup_share_linear.v1: initial_rate", initial_rate, low=0.0, high=FLOAT32_LIMIT)
    steps = check_number(
        "warmup_share_linear.v1: total_steps", total_steps, low=1, integer=True, note=" (training.max_steps)"
    )
    share = check_number("warmup_share_linear.v1: warmup_share", warmup_share, low=0.0, high=1.0, high_open=True)
    return _warmup_linear(rate, int(steps), round(share * steps))


def _warmup_linear(initial_rate: float, total_steps: int, warmup_steps: int) -> Iterator[float]:
    step = 0
    while True:
        if step < warmup_steps:
            factor = step / max(1, warmup_steps)
        else:
            factor = max(0.0, (total_steps - step) / max(1.0, total_steps - warmup_steps))
        yield factor * initial_rate
        step += 1

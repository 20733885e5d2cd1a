"""``spacy-imbalance.warmup_share_linear.v1``: thinc's ``warmup_linear.v1``
with the warm-up given as a share of the budget, so that a shorter or longer
``training.max_steps`` keeps the schedule's shape (a fixed 250-step warm-up
inside a 400-step budget left the fine-tuned configs at a fraction of their
rate for most of training)."""
from typing import Iterator

from spacy.util import registry


@registry.schedules("spacy-imbalance.warmup_share_linear.v1")
def create_warmup_share_linear_v1(initial_rate: float, total_steps: int, warmup_share: float = 0.1) -> Iterator[float]:
    """Linear warm-up from 0 over ``warmup_share`` of ``total_steps``, then
    linear decay to 0 at ``total_steps`` (a generator, as thinc 8's
    schedules are)."""
    if not (0.0 <= float(initial_rate) < float("inf")):
        raise ValueError(f"warmup_share_linear.v1: initial_rate must be a finite rate >= 0, got {initial_rate!r}")
    if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
        raise ValueError(f"warmup_share_linear.v1: total_steps must be an integer >= 1 (training.max_steps), got {total_steps!r}")
    if not (0.0 <= float(warmup_share) < 1.0):
        raise ValueError(f"warmup_share_linear.v1: warmup_share must be in [0, 1), got {warmup_share!r}")
    return _warmup_linear(float(initial_rate), total_steps, round(warmup_share * total_steps))


def _warmup_linear(initial_rate: float, total_steps: int, warmup_steps: int) -> Iterator[float]:
    step = 0
    while True:
        if step < warmup_steps:
            factor = step / max(1, warmup_steps)
        else:
            factor = max(0.0, (total_steps - step) / max(1.0, total_steps - warmup_steps))
        yield factor * initial_rate
        step += 1

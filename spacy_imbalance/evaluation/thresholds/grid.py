"""The threshold values a search tries: ``default_grid`` for a step (the
``--step`` of ``tune-thresholds``, for the per-label thresholds of
``sampled_spancat`` and the threshold pair of ``two_task_ner`` alike) and
``check_grid`` for a grid given as values."""
import math
from typing import List, Sequence

import numpy

# Every pair of the two_task_ner grid decodes the whole dev set: 0.005 gives
# 199 thresholds per axis, ~40 000 pairs; 1e-4 would give 10^8.
MIN_STEP = 0.005
MAX_STEP = 0.5


def default_grid(step: float = 0.05, *, setting: str = "the grid step") -> List[float]:
    """step, 2 step, ... below 1. ``setting`` names the step in the error."""
    # `not (...)` also rejects NaN
    if not (MIN_STEP <= step <= MAX_STEP):
        size = f" ({_grid_size(step)} thresholds per axis)" if 0 < step < MIN_STEP else ""
        raise ValueError(
            f"{setting} must be in [{MIN_STEP}, {MAX_STEP}], at most {math.ceil(1.0 / MIN_STEP) - 1} thresholds "
            f"per axis, got {step}{size}"
        )
    return [round(float(x), 6) for x in numpy.arange(step, 1.0 - 1e-9, step)]


def _grid_size(step: float) -> str:
    """The thresholds per axis a step in (0, MIN_STEP) would give, as text:
    1 / step overflows to inf for a subnormal step (5e-324), and math.ceil(inf)
    raises OverflowError, so such a size is said, not computed."""
    per_axis = 1.0 / step
    if not math.isfinite(per_axis):
        return "over 1e308"
    # exact while it is readable; 1e-308 would give a 309-digit count
    return f"{math.ceil(per_axis) - 1}" if per_axis < 1e9 else f"about {per_axis:.3g}"


def check_grid(grid: Sequence[float]) -> List[float]:
    """The grid's values sorted, each once; an error unless they are in (0, 1)."""
    values = [float(v) for v in grid]
    if not values or any(not 0.0 < v < 1.0 for v in values):
        raise ValueError(f"the threshold grid must be a non-empty list of values in (0, 1), got {list(grid)!r}")
    return sorted(set(values))

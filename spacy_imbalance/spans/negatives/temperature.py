"""Temperature schedules of the weighted sampler (Eq. 16's T), as callables
of the training step.

The paper sets T = sqrt(C - c) for epoch c of C: flat, near-uniform sampling
while the model is still poor, sharper as it learns, and T = 1 in the last
epoch. spaCy trains by steps and a component never learns the epoch, so
``sqrt_temperature`` cuts ``total_steps`` into ``n_epochs`` equal stages and
applies the same formula per stage; after ``total_steps`` T stays 1. The
step is the component's count of optimizer steps (``finish_update`` calls),
so ``accumulate_gradient`` does not shorten the schedule.
"""
import math

from spacy.util import registry

# The range of a constant T. The log-weights the samplers divide by T lie in
# [0, ln K] for v1 (K labels) and in [-69·mu, ln K] for v2. Below 1e-6 they
# swamp the Gumbel noise (of scale 1) whatever mu: sampling is a
# deterministic top-k whose ties go by position, and as T -> 0 the keys
# overflow to inf. Above 1e6 they are far below the noise for v1 and for
# v2 with the paper's mu = 8: uniform sampling (that is uniform_negatives).
# inf and nan are no temperature at all.
MIN_TEMPERATURE = 1e-6
MAX_TEMPERATURE = 1e6


class SqrtTemperature:
    def __init__(self, total_steps: int = 20000, n_epochs: int = 10) -> None:
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(
                f"sqrt_temperature: total_steps must be an integer >= 1 (the optimizer steps the schedule "
                f"spans), got {total_steps!r}; with [training] max_steps = 0 (no step limit) set it to the "
                "number of steps you expect to train, or use spacy-imbalance.constant_temperature.v1"
            )
        if isinstance(n_epochs, bool) or not isinstance(n_epochs, int) or n_epochs < 1:
            raise ValueError(f"sqrt_temperature: n_epochs must be an integer >= 1, got {n_epochs!r}")
        self.total_steps = total_steps
        self.n_epochs = n_epochs

    def __call__(self, step: int) -> float:
        stage = min(self.n_epochs * step // self.total_steps, self.n_epochs - 1)
        return math.sqrt(self.n_epochs - stage)

    def __repr__(self) -> str:
        return f"SqrtTemperature(total_steps={self.total_steps}, n_epochs={self.n_epochs})"


class ConstantTemperature:
    def __init__(self, value: float) -> None:
        # `not (...)` also rejects NaN
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            MIN_TEMPERATURE <= value <= MAX_TEMPERATURE
        ):
            raise ValueError(
                f"constant_temperature: value must be in [{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}] (below, sampling "
                f"is a deterministic top-k; above, it is uniform sampling), got {value!r}"
            )
        self.value = float(value)

    def __call__(self, step: int) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"ConstantTemperature({self.value})"


@registry.misc("spacy-imbalance.sqrt_temperature.v1")
def create_sqrt_temperature_v1(total_steps: int = 20000, n_epochs: int = 10) -> SqrtTemperature:
    """T = sqrt(C - c) with c = floor(C·step / total_steps) capped at C - 1.
    Set total_steps = ${training.max_steps}; 20000 is spaCy's default."""
    return SqrtTemperature(total_steps, n_epochs)


@registry.misc("spacy-imbalance.constant_temperature.v1")
def create_constant_temperature_v1(value: float = 1.0) -> ConstantTemperature:
    """value (float): T at every step, in [MIN_TEMPERATURE, MAX_TEMPERATURE]."""
    return ConstantTemperature(value)

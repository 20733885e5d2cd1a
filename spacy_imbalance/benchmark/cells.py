"""The result cells of the benchmark's tables, in points (a score of 0.253
shows as 25.3): a mean over seeds with its spread, and a paired difference
with its bootstrap interval."""
from statistics import mean, stdev
from typing import Mapping, Sequence

# a cell with nothing to show (no run, no comparison)
MISSING = "–"


def points(value: float, digits: int = 1) -> str:
    """A score in points: 0.253 -> "25.3"."""
    return f"{100 * value:.{digits}f}"


def signed(value: float, digits: int = 1) -> str:
    """A difference in points, with its sign: 0.012 -> "+1.2"; one digit more
    where ``digits`` would round a nonzero value to a signed zero (-0.0004 ->
    "-0.04": an interval's bound printed "-0.0" reads as touching 0)."""
    text = f"{100 * value:+.{digits}f}"
    if value != 0 and float(text) == 0:
        text = f"{100 * value:+.{digits + 1}f}"
    return text


def mean_std(mean_value: float, std: float, digits: int = 1, scale: float = 100) -> str:
    """"25.3 ± 1.2": a mean and its standard deviation, in points (``scale``
    1 for values that are in points already)."""
    return f"{scale * mean_value:.{digits}f} ± {scale * std:.{digits}f}"


def over_seeds(values: Sequence[float], digits: int = 1, *, scale: float = 100, alone: bool = False) -> str:
    """The mean ± std cell of one value per seed: std 0 for a single seed,
    or with ``alone`` that value alone; ``MISSING`` for none."""
    if not values:
        return MISSING
    if alone and len(values) == 1:
        return f"{scale * mean(values):.{digits}f}"
    return mean_std(mean(values), stdev(values) if len(values) > 1 else 0.0, digits, scale)


def excludes_zero(diff: Mapping[str, float]) -> bool:
    """Whether a bootstrap interval (``low``, ``high``) excludes 0."""
    return diff["low"] > 0 or diff["high"] < 0


def bounds(diff: Mapping[str, float], digits: int = 1) -> str:
    """"[-0.3, +2.8]": a bootstrap interval alone (for a table that gives the
    difference and its interval columns of their own)."""
    return f"[{signed(diff['low'], digits)}, {signed(diff['high'], digits)}]"


def interval(diff: Mapping[str, float], digits: int = 1, *, bold: bool = False) -> str:
    """"+1.2 [-0.3, +2.8]": a paired difference (``delta``) and its bootstrap
    interval; with ``bold``, in bold where the interval excludes 0."""
    text = f"{signed(diff['delta'], digits)} {bounds(diff, digits)}"
    return f"**{text}**" if bold and excludes_zero(diff) else text

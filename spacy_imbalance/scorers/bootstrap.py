"""Bootstrap confidence intervals and paired bootstrap differences.

Test sentences are resampled with replacement; each resample's score is
computed from the summed match counts (see ``counts.py``). For a paired
comparison both systems are scored on the *same* resamples, which removes the
variance that comes from which sentences happen to be in the test set.
"""
from typing import Dict, List, Sequence, Tuple

import numpy

from .aggregate import prf
from .counts import MatchCounts

SCORE_NAMES = ("macro_p", "macro_r", "macro_f", "micro_p", "micro_r", "micro_f")


def resample_weights(n_examples: int, n_resamples: int, seed: int) -> numpy.ndarray:
    """(n_resamples, n_examples): how often each example is drawn per resample."""
    if n_examples < 1:
        raise ValueError("bootstrap: the test set has no examples")
    if n_resamples < 1:
        raise ValueError(f"bootstrap: n_resamples must be at least 1, got {n_resamples}")
    rng = numpy.random.default_rng(seed)
    return rng.multinomial(n_examples, numpy.full(n_examples, 1.0 / n_examples), size=n_resamples)


def resampled_scores(counts: MatchCounts, weights: numpy.ndarray) -> Dict[str, numpy.ndarray]:
    """Micro and macro P/R/F of every resample, arrays of shape (n_resamples,)."""
    if weights.shape[1] != counts.table.shape[0]:
        raise ValueError(
            f"bootstrap: weights cover {weights.shape[1]} examples, counts {counts.table.shape[0]}"
        )
    totals = numpy.tensordot(weights, counts.table, axes=(1, 0))  # (B, L, 3)
    s = prf(totals)
    return {name: s[name] for name in SCORE_NAMES}


def interval(samples: numpy.ndarray, level: float = 0.95) -> Tuple[float, float]:
    """Percentile interval holding ``level`` of the samples."""
    tail = 100 * (1 - level) / 2
    low, high = numpy.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_intervals(
    counts: MatchCounts, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> Dict[str, Tuple[float, float]]:
    weights = resample_weights(counts.table.shape[0], n_resamples, seed)
    return {k: interval(v, level) for k, v in resampled_scores(counts, weights).items()}


def align_label_sets(systems: Sequence[MatchCounts]) -> List[MatchCounts]:
    labels = sorted({label for counts in systems for label in counts.labels})
    return [counts.with_labels(labels) for counts in systems]


def paired_bootstrap(
    baseline: MatchCounts,
    system: MatchCounts,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Dict[str, Dict[str, float]]:
    """Distribution of ``score(system) - score(baseline)`` over shared resamples.

    RETURNS: per score name, the observed difference ``delta``, its interval
        ``low``/``high``, and ``share_not_better``: the share of resamples in
        which the system does not beat the baseline (Koehn 2004's paired
        bootstrap). The interval is the evidence to read: a win needs ``low > 0``,
        and, across training seeds, a consistent sign.
    """
    return paired_bootstrap_runs([baseline], [system], n_resamples=n_resamples, seed=seed, level=level)


def paired_bootstrap_runs(
    baselines: Sequence[MatchCounts],
    systems: Sequence[MatchCounts],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Dict[str, Dict[str, float]]:
    """Paired bootstrap of the mean difference over several training runs:
    ``mean_k score(systems[k]) - score(baselines[k])``, every run scored on
    the same resampled test sentences. Pairing by seed and averaging removes
    part of the seed-to-seed variance that a single pair of runs carries;
    resampling the sentences keeps the test-set variance in the interval.

    RETURNS: as ``paired_bootstrap``.
    """
    if not baselines or len(baselines) != len(systems):
        raise ValueError(
            f"paired bootstrap: need as many system runs as baseline runs, got {len(systems)} and {len(baselines)}"
        )
    n_examples = {counts.table.shape[0] for counts in [*baselines, *systems]}
    if len(n_examples) != 1:
        raise ValueError(
            f"paired bootstrap: the runs were scored on different test sets ({sorted(n_examples)} examples)"
        )
    aligned = align_label_sets([*baselines, *systems])
    base, other = aligned[: len(baselines)], aligned[len(baselines) :]
    weights = resample_weights(n_examples.pop(), n_resamples, seed)
    result = {}
    for name in SCORE_NAMES:
        diff = numpy.mean(
            [resampled_scores(s, weights)[name] - resampled_scores(b, weights)[name] for b, s in zip(base, other)],
            axis=0,
        )
        observed = numpy.mean([prf(s.totals())[name] - prf(b.totals())[name] for b, s in zip(base, other)])
        low, high = interval(diff, level)
        result[name] = {
            "delta": float(observed),
            "low": low,
            "high": high,
            "share_not_better": float((diff <= 0).mean()),
        }
    return result

"""The audit's miss-rate estimate against the rate hiding realised."""
from typing import Any, Dict, Mapping, Optional, Sequence

from .matching import ratio


def realised_rates(removed: Mapping[str, int], kept: Mapping[str, int]) -> Dict[str, Optional[float]]:
    """removed / (removed + kept) per label and in total (``total``)."""
    labels = sorted(set(removed) | set(kept))
    rates = {label: ratio(removed.get(label, 0), removed.get(label, 0) + kept.get(label, 0)) for label in labels}
    rates["total"] = ratio(sum(removed.values()), sum(removed.values()) + sum(kept.values()))
    return rates


def estimate_errors(rows: Sequence[Mapping[str, Any]], truth: Mapping[str, Optional[float]]) -> Dict[str, Dict[str, Any]]:
    """The audit's summary.json rows against the realised rates: estimate,
    interval, error (estimate - true) and whether the interval holds it."""
    out = {}
    for row in rows:
        true = truth.get(row["label"])
        if true is None:
            continue
        out[row["label"]] = {
            "true": true,
            "estimate": row["rate"],
            "low": row["rate_low"],
            "high": row["rate_high"],
            "error": row["rate"] - true,
            "covered": bool(row["rate_low"] <= true <= row["rate_high"]),
        }
    return out

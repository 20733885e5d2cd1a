"""How calibrated the span probabilities of ``sampled_spancat`` are:
reliability tables and the expected calibration error (``reliability``), and
the report ``spacy-imbalance tune-thresholds --report`` writes (``report``).
The thresholds themselves are tuned in ``spacy_imbalance.evaluation.thresholds``.
See docs/calibration.md."""
from .reliability import (
    Population,
    ReliabilityBin,
    expected_calibration_error,
    plot_reliability,
    reliability_table,
    span_reliability,
)

__all__ = [
    "Population",
    "ReliabilityBin",
    "expected_calibration_error",
    "plot_reliability",
    "reliability_table",
    "span_reliability",
]

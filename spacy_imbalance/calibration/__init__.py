"""Calibrated decisions for ``sampled_spancat``: per-label thresholds tuned
for dev macro-F1 (``thresholds``) and reliability tables of its span
probabilities (``reliability``). See docs/calibration.md."""
from ..pipeline.sampled_spancat import set_span_thresholds
from .reliability import (
    Population,
    ReliabilityBin,
    expected_calibration_error,
    plot_reliability,
    reliability_table,
    span_reliability,
)
from .thresholds import SpanThresholdSearch, tune_span_thresholds

__all__ = [
    "Population",
    "ReliabilityBin",
    "SpanThresholdSearch",
    "expected_calibration_error",
    "plot_reliability",
    "reliability_table",
    "set_span_thresholds",
    "span_reliability",
    "tune_span_thresholds",
]

"""Moved to ``spacy_imbalance.evaluation.thresholds.spans``; this old path
re-exports it with a DeprecationWarning."""
import warnings

from ...evaluation.thresholds.spans import (  # noqa: F401
    DEFAULT_MIN_GAIN,
    SpanThresholdSearch,
    decide,
    dev_matcher,
    score_thresholds,
    search_floor,
    search_thresholds,
    set_span_thresholds,
    tune_span_thresholds,
)

warnings.warn(
    "spacy_imbalance.spans.thresholds.tuning moved to spacy_imbalance.evaluation.thresholds.spans",
    DeprecationWarning,
    stacklevel=2,
)

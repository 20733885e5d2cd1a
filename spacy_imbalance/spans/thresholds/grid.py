"""Moved to ``spacy_imbalance.evaluation.thresholds.grid``; this old path
re-exports it with a DeprecationWarning."""
import warnings

from ...evaluation.thresholds.grid import MAX_STEP, MIN_STEP, check_grid, default_grid  # noqa: F401

warnings.warn(
    "spacy_imbalance.spans.thresholds.grid moved to spacy_imbalance.evaluation.thresholds.grid",
    DeprecationWarning,
    stacklevel=2,
)

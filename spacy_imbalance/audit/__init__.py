"""The missing-annotation audit: cross-fitted span scores, calibrated
suspects and an estimate of how many entities the annotators missed
(``spacy-imbalance audit``)."""
from .estimate import Isotonic, MissRate, estimate_miss_rate
from .export import SPANS_KEY, write_outputs
from .folds import FoldPlan, assign_folds
from .run import DEFAULT_CONFIG, FEATURES_CONFIG, AuditResult, AuditSettings, Suspect, run_audit

__all__ = [
    "AuditResult",
    "AuditSettings",
    "DEFAULT_CONFIG",
    "FEATURES_CONFIG",
    "FoldPlan",
    "Isotonic",
    "MissRate",
    "SPANS_KEY",
    "Suspect",
    "assign_folds",
    "estimate_miss_rate",
    "run_audit",
    "write_outputs",
]

"""Sweeps of training trials: each trial trains a config and evaluates it
(``trial``); the runner runs them one after another or on Ray Tune, and
resumes a sweep from the records that are fresh (``runner``, ``records``);
``provenance`` records where a run ran. ``spacy-imbalance benchmark`` and ``advise`` run on it."""
from .provenance import run_provenance
from .records import is_fresh, read_record, write_record
from .runner import pending, ray_available, run_pending, run_trials, start_ray, use_ray
from .trial import Trial, TrialFailed, best_dev_score, dev_curve, run_trial

__all__ = [
    "run_provenance", "Trial", "TrialFailed", "best_dev_score", "dev_curve", "is_fresh", "pending", "ray_available",
    "read_record", "run_pending", "run_trial", "run_trials", "start_ray", "use_ray", "write_record",
]

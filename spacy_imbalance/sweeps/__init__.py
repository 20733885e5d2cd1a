"""Sweeps of training trials: each trial trains a config and evaluates it
(``trial``); the runner runs them one after another or on Ray Tune
(``runner``); ``provenance`` records where a run ran. scripts/benchmark.py and ``spacy-imbalance advise`` run on it."""
from .provenance import run_provenance
from .runner import ray_available, run_trials, start_ray, use_ray
from .trial import Trial, TrialFailed, best_dev_score, dev_curve, run_trial

__all__ = ["run_provenance", "Trial", "TrialFailed", "best_dev_score", "dev_curve", "ray_available", "run_trial", "run_trials", "start_ray", "use_ray"]

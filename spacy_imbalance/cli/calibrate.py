"""``spacy-imbalance calibrate``: the name ``tune-thresholds`` had for
``sampled_spancat``, kept as an alias of it (``project.yml`` and scripts
call it)."""
from ._app import alias
from .tune_thresholds import tune_thresholds_cli

alias("calibrate", "tune-thresholds", tune_thresholds_cli)

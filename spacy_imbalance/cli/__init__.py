"""The ``spacy-imbalance`` command line (also ``python -m spacy_imbalance``)."""
from ._app import app, setting_value, split_sets
from . import (  # noqa: F401  (register commands)
    advise,
    apply_review,
    audit,
    audit_check,
    augment,
    benchmark,
    calibrate,
    convert,
    evaluate,
    init_config,
    mask,
    missampling,
    resample,
    review,
    scope_split,
    stats,
    subsample,
    summarize,
    tune_thresholds,
    undersample,
)

# the --set parsing of the commands (its home: benchmark.options)
__all__ = ["app", "setting_value", "split_sets"]

"""The ``spacy-imbalance`` command line (also ``python -m spacy_imbalance``)."""
from ._app import app
from . import (  # noqa: F401  (register commands)
    advise,
    audit,
    augment,
    calibrate,
    convert,
    evaluate,
    init_config,
    mask,
    missampling,
    resample,
    stats,
    subsample,
    summarize,
    tune_thresholds,
    undersample,
)

__all__ = ["app"]

"""The ``spacy-imbalance`` command line (also ``python -m spacy_imbalance``)."""
from ._app import app
from . import convert, evaluate, stats, summarize  # noqa: F401  (register commands)

__all__ = ["app"]

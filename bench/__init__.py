"""The project's own studies: what the scripts in scripts/ run beyond
``spacy-imbalance benchmark`` (whose library is spacy_imbalance.benchmark):
the facts the docs quote (``facts``), and one sub-package or module per
study or measurement (audit and advise validation, headline tables,
calibration variants, the feature cache).

Not part of the spacy-imbalance API: run.sh puts this clone's root on the
environment's path so that every script, run from any folder, imports it.
"""

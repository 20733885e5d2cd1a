"""Old import paths, kept for code written before the threshold search
moved to ``spacy_imbalance.evaluation.thresholds`` (a tool that takes a
trained pipeline: it sits above ``pipeline/``, which ``spans/`` is below).
``tuning`` and ``grid`` re-export it with a DeprecationWarning; nothing in
the package imports them (``tests/test_layers.py`` checks that)."""

"""The project's benchmark harness: what the scripts in scripts/ run.

Training, evaluating and recording runs (``runs``), reading their records
(``records``), paired comparisons (``paired``), the result cells and tables
of the write-ups (``cells``, ``tables``), the options the scripts share
(``options``), and one sub-package or module per study or measurement.

Not part of the spacy-imbalance API: it is installed beside the package only
so that every script, run from any folder, imports it as a package (see
setup.cfg).
"""

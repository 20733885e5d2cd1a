"""The benchmark as a library, run by ``spacy-imbalance benchmark``: configs x
corpora x seeds with overrides run as one resumable sweep on the shared
runner (``sweep``; one run: ``runs``, its files: ``layout``, ``names``),
recorded with provenance (``records``), summarised (``summary``, which
``spacy-imbalance summarize`` shares) and compared by paired bootstrap
(``paired``); the speed benchmark (``speed``, ``speed_table``), what Ray buys
a sweep (``sweep_speed``), thresholds tuned on finished runs (``tuning``), a
study's tables (``study``), the cells and lines of the tables (``cells``,
``tables``), and which records behind published tables carry provenance
(``coverage``). The command-line values they share are in ``options``."""
from .summary import CUT_MARK, markdown_table, plot_per_type, summarize_reports

__all__ = ["CUT_MARK", "markdown_table", "plot_per_type", "summarize_reports"]

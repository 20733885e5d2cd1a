"""The benchmark as a library: what ``spacy-imbalance summarize`` and the
benchmark share (``summary``: mean ± std tables and per-type charts of runs)."""
from .summary import CUT_MARK, markdown_table, plot_per_type, summarize_reports

__all__ = ["CUT_MARK", "markdown_table", "plot_per_type", "summarize_reports"]

"""Writing plots: every plot of the package goes through ``save_figure``."""
from .png import compact_png, save_figure

__all__ = ["compact_png", "save_figure"]

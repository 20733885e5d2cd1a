"""Thinc layers (``thinc_layers``), one layer per module."""

"""Macro-F1 scorers, match counts and bootstrap statistics."""

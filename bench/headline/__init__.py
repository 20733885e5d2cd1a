"""The headline table of one encoder: every system against the best spaCy
built-in on the same encoder and budget, each method's own claim re-tested
(scripts/headline_table.py)."""

"""Corpus reading: CoNLL conversion, the embedded default corpus, readers."""

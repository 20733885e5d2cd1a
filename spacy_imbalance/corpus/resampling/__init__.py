"""Sentence-level resampling (Wang & Wang 2022) and its reader."""
from .resampling import METHODS, CountUnit, Method, rareness, sentence_type_counts, sentence_weights
from .reader import ResampledCorpus, create_resampled_corpus_reader_v1

__all__ = ["METHODS", "CountUnit", "Method", "rareness", "sentence_type_counts", "sentence_weights", "ResampledCorpus", "create_resampled_corpus_reader_v1"]

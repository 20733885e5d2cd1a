"""Simple data augmentation for NER (Dai & Adel 2020) and its reader."""
from .augmentation import METHODS, AugmentMethod, augment_docs, augmented_copies, validate_settings
from .reader import AugmentedCorpus, create_augmented_corpus_reader_v1

__all__ = ["METHODS", "AugmentMethod", "augment_docs", "augmented_copies", "validate_settings", "AugmentedCorpus", "create_augmented_corpus_reader_v1"]

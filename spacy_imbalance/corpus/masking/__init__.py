"""Synthetic unlabeled entities (entities dropped with probability p) and their reader."""
from .masking import check_keys, check_probability, describe_masking, mask_entities, masking_counts, unmaskable_gold
from .reader import MaskedCorpus, create_masked_corpus_reader_v1

__all__ = ["check_keys", "check_probability", "describe_masking", "mask_entities", "masking_counts", "unmaskable_gold", "MaskedCorpus", "create_masked_corpus_reader_v1"]

"""Low-resource and imbalanced training subsets (Nguyen et al.) and their reader."""
from .subsampling import check_subsample_settings, entity_token_share, entity_tokens, subsample, subsample_indices
from .reader import SubsampledCorpus, create_subsampled_corpus_reader_v1

__all__ = ["check_subsample_settings", "entity_token_share", "entity_tokens", "subsample", "subsample_indices", "SubsampledCorpus", "create_subsampled_corpus_reader_v1"]

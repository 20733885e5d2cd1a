"""Balanced undersampling (Akkasi et al. 2018) and its augmenter."""
from .undersampling import check_ratio, kept_tokens, undersample_doc, undersample_docs
from .augmenter import BalancedUndersampler, create_balanced_undersampling_augmenter_v1

__all__ = ["check_ratio", "kept_tokens", "undersample_doc", "undersample_docs", "BalancedUndersampler", "create_balanced_undersampling_augmenter_v1"]

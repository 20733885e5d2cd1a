"""Distantly supervised labels (dictionary matching, BOND-style) and their reader."""
from .distant import (
    LabelQuality,
    build_dictionary,
    check_distant_settings,
    describe_distant,
    distant_annotate,
    distant_supervision,
    label_quality,
    match_dictionary,
)
from .reader import DistantCorpus, create_distant_corpus_reader_v1

__all__ = [
    "LabelQuality",
    "build_dictionary",
    "check_distant_settings",
    "describe_distant",
    "distant_annotate",
    "distant_supervision",
    "label_quality",
    "match_dictionary",
    "DistantCorpus",
    "create_distant_corpus_reader_v1",
]

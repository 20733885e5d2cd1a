"""Distantly supervised labels (dictionary matching, BOND-style) and their reader."""
from . import distant
from .distant import *  # noqa: F401,F403 -- the public names are distant.__all__
from .reader import DistantCorpus, create_distant_corpus_reader_v1

__all__ = [*distant.__all__, "DistantCorpus", "create_distant_corpus_reader_v1"]

"""Label scopes: which entity types a document annotates, and the readers
that set them (``ScopedCorpus.v1``) and combine scoped corpora (``CombinedCorpus.v1``)."""
from .reader import CombinedCorpus, ScopedCorpus, create_combined_corpus_reader_v1, create_scoped_corpus_reader_v1
from .scopes import SCOPE_KEY, check_scope_labels, get_label_scope, out_of_scope_spans, scope_problem, set_label_scope

__all__ = [
    "SCOPE_KEY",
    "check_scope_labels",
    "set_label_scope",
    "get_label_scope",
    "out_of_scope_spans",
    "scope_problem",
    "ScopedCorpus",
    "CombinedCorpus",
    "create_scoped_corpus_reader_v1",
    "create_combined_corpus_reader_v1",
]

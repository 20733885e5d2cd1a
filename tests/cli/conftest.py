"""Fixtures of the command tests: a small CoNLL corpus and its .spacy copy."""
import pytest

from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.docs_io import copy_ents_to_spans, write_docbin

from ._cli import CONLL


@pytest.fixture
def conll_path(tmp_path):
    path = tmp_path / "corpus.conll"
    path.write_text(CONLL, encoding="utf8")
    return path


@pytest.fixture
def spacy_path(tmp_path, conll_path):
    docs, _ = conll_to_docs(conll_path)
    copy_ents_to_spans(docs, "sc")
    path = tmp_path / "corpus.spacy"
    write_docbin(docs, path)
    return path

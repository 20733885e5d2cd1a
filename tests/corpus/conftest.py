"""Fixtures of the corpus tests."""
import pytest
import spacy


@pytest.fixture(scope="module")
def nlp():
    """A blank English pipeline, one per test module: the readers only use its
    tokenizer and vocab, and building it for every test costs time."""
    return spacy.blank("en")

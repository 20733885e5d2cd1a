"""The documents the label-scope tests of the corpus read and write: one of
two sentences about people and organisations (its first sentence the same
everywhere), and one about a product and a place."""
from typing import List

from spacy.tokens import Doc
from spacy.vocab import Vocab

PEOPLE = frozenset({"PER", "ORG"})
FIRST_WORDS = ["Ann", "works", "at", "Acme", "."]
FIRST_ENTS = ["B-PER", "O", "O", "B-ORG", "O"]


def two_sentences(vocab: Vocab, words: List[str], ents: List[str]) -> Doc:
    """"Ann works at Acme ." (PER, ORG) and a second sentence of ``words``
    with the entity tags ``ents``, in one doc with its sentence starts set."""
    starts = [True, *[False] * (len(FIRST_WORDS) - 1), True, *[False] * (len(words) - 1)]
    return Doc(vocab, words=[*FIRST_WORDS, *words], ents=[*FIRST_ENTS, *ents], sent_starts=starts)


def product_doc(vocab: Vocab) -> Doc:
    """"An iPhone in Paris": a product and a place."""
    return Doc(vocab, words=["An", "iPhone", "in", "Paris"], ents=["O", "B-PROD", "O", "B-LOC"])

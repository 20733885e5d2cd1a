"""Label scopes through the other readers (issue 47): ScopedCorpus nests
inside any reader of this package, and a scope stored in a .spacy file
survives the readers' sentence splitting, spaCy's own (gold_preproc,
max_length) and augmenters. Without it a sentence of a scoped corpus would
train the types it does not annotate as "no entity"."""
import warnings

import pytest
from spacy.tokens import Doc, DocBin
from spacy.util import registry

from spacy_imbalance.corpus.scopes.scopes import SCOPE_KEY, get_label_scope, set_label_scope
from spacy_imbalance.corpus.sentences import keep_label_scope, sentence_docs

from .._corpus import corpus_config
from ._docs import PEOPLE, two_sentences

# each reader of this package with settings that yield examples from the docs below
READERS = {
    "MaskedCorpus": ["p = 0.5"],
    "ResampledCorpus": ['method = "sCR"'],
    "SubsampledCorpus": ["n_sentences = 2"],
    "AugmentedCorpus": ["p = 0.5", "n_copies = 2"],
    "DistantCorpus": ["dictionary_fraction = 1.0"],
}


def people_docs(vocab):
    """Two sentences in one doc (sentence starts set) and one more doc, PER/ORG only."""
    second = Doc(vocab, words=["Acme", "hired", "Ann", "."], ents=["B-ORG", "O", "B-PER", "O"])
    return [two_sentences(vocab, ["Bob", "sings", "."], ["B-PER", "O", "O"]), second]


@pytest.fixture
def people(tmp_path, nlp):
    path = tmp_path / "people.spacy"
    DocBin(docs=people_docs(nlp.vocab)).to_disk(path)
    return path


@pytest.fixture
def stored(tmp_path, nlp):
    """The same docs with their scope stored in the file."""
    docs = people_docs(nlp.vocab)
    for doc in docs:
        set_label_scope(doc, PEOPLE)
    path = tmp_path / "stored.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


def _examples(config, nlp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the readers' notes on tiny corpora
        return list(registry.resolve(config)["corpus"](nlp))


@pytest.mark.parametrize("name", list(READERS))
def test_a_scoped_corpus_inside_each_reader_keeps_its_scope_on_every_sentence(people, nlp, name):
    config = corpus_config((name, *READERS[name]), ("ScopedCorpus", 'labels = ["PER", "ORG"]'), path=people)
    examples = _examples(config, nlp)
    # the first doc is split into its two sentences (augmented copies replace some words)
    texts = [eg.reference.text for eg in examples]
    assert any("sings" in text for text in texts) and not any("sings" in text and "works" in text for text in texts)
    assert [get_label_scope(eg.reference) for eg in examples] == [PEOPLE] * len(examples)


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize("options", [[], ["gold_preproc = true"], ["max_length = 6"]])
def test_each_reader_keeps_the_scope_stored_in_its_file(stored, nlp, name, options):
    """spaCy's own splitting (gold_preproc, max_length) makes new docs: the scope follows them."""
    examples = _examples(corpus_config((name, *READERS[name], *options), path=stored), nlp)
    assert examples
    assert [get_label_scope(eg.reference) for eg in examples] == [PEOPLE] * len(examples)


@pytest.mark.parametrize("options", [[], ["gold_preproc = true"], ["max_length = 6"]])
def test_a_conll_file_has_no_scope_and_gets_none(tmp_path, nlp, options):
    path = tmp_path / "train.conll"
    path.write_text("Ann\tB-PER\nsings\tO\n\nAcme\tB-ORG\nsells\tO\n", encoding="utf8")
    examples = _examples(corpus_config(("MaskedCorpus", "p = 0.0", *options), path=path), nlp)
    assert [get_label_scope(eg.reference) for eg in examples] == [None, None]


def test_an_augmenter_of_a_reader_keeps_the_stored_scope(stored, nlp):
    augmenter = ("spacy.lower_case.v1", "level = 1.0")
    examples = _examples(corpus_config(("MaskedCorpus", "p = 0.0", "gold_preproc = true"), path=stored, augmenter=augmenter), nlp)
    assert [eg.reference.text.strip() for eg in examples] == ["ann works at acme .", "bob sings .", "acme hired ann ."]
    assert [get_label_scope(eg.reference) for eg in examples] == [PEOPLE] * 3


def test_balanced_undersampling_keeps_the_stored_scope(stored, nlp):
    augmenter = ("spacy-imbalance.balanced_undersampling.v1", "ratio = 1.0")
    examples = _examples(corpus_config(("spacy.Corpus.v1", "gold_preproc = false"), path=stored, augmenter=augmenter), nlp)
    # ratio 1: only the entity tokens are kept, one example per sentence
    assert [eg.reference.text.strip() for eg in examples] == ["Ann Acme", "Bob", "Acme Ann"]
    assert [get_label_scope(eg.reference) for eg in examples] == [PEOPLE] * 3


def test_sentences_carry_the_scope_and_no_other_user_data(nlp):
    doc = people_docs(nlp.vocab)[0]
    set_label_scope(doc, PEOPLE)
    # a token extension's value, keyed by character offsets into doc
    doc.user_data[("._.", "note", 21, None)] = "Bob's"
    first, second = sentence_docs(doc)
    assert first.user_data == {SCOPE_KEY: ["ORG", "PER"]}
    assert second.user_data == {SCOPE_KEY: ["ORG", "PER"]}
    # a copy, not the list itself: editing one doc's scope leaves the other's
    first.user_data[SCOPE_KEY].append("LOC")
    assert doc.user_data[SCOPE_KEY] == ["ORG", "PER"]


def test_keep_label_scope_leaves_a_doc_without_scope_alone(nlp):
    source, target = people_docs(nlp.vocab)
    assert keep_label_scope(source, target) is target
    assert SCOPE_KEY not in target.user_data

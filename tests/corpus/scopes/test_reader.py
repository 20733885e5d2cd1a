"""The ScopedCorpus and CombinedCorpus readers (``corpus/scopes/reader.py``):
every example carries its corpus's label scope, however it was read, and a
corpus that contradicts its scope is refused with the file, the document
and the entity named."""
import pytest
from spacy.tokens import Doc, DocBin, Span, SpanGroup
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.corpus.scopes.reader import create_combined_corpus_reader_v1, create_scoped_corpus_reader_v1
from spacy_imbalance.corpus.scopes.scopes import SCOPE_KEY, get_label_scope, set_label_scope

from .._corpus import corpus_config, write_conll, write_docs
from ._docs import product_doc, two_sentences


def people_docs(vocab):
    """Two sentences in one doc (sentence starts set) and one more doc, PER/ORG only."""
    second = Doc(vocab, words=["Bob", "left", "."], ents=["B-PER", "O", "O"])
    return [two_sentences(vocab, ["She", "sings", "."], ["O", "O", "O"]), second]


def product_docs(vocab):
    return [product_doc(vocab)]


@pytest.fixture
def people(tmp_path, nlp):
    return write_docs(tmp_path / "people.spacy", people_docs(nlp.vocab))


@pytest.fixture
def products(tmp_path, nlp):
    return write_docs(tmp_path / "products.spacy", product_docs(nlp.vocab))


def test_scoped_corpus_sets_the_scope_on_every_example(people, nlp):
    reader = create_scoped_corpus_reader_v1(people, labels=["PER", "ORG"])
    examples = list(reader(nlp))
    plain = list(registry.readers.get("spacy.Corpus.v1")(path=people, gold_preproc=False)(nlp))
    assert [eg.reference.text for eg in examples] == [eg.reference.text for eg in plain]
    assert [get_label_scope(eg.reference) for eg in examples] == [frozenset({"PER", "ORG"})] * 2
    assert [get_label_scope(eg.reference) for eg in plain] == [None, None]


@pytest.mark.parametrize("options", [{"gold_preproc": True}, {"max_length": 6}])
def test_scoped_corpus_scopes_the_sentences_spacy_splits_off(people, nlp, options):
    """Sentence splitting (Span.as_doc) drops user data: the scope is set after it."""
    examples = list(create_scoped_corpus_reader_v1(people, labels=["PER", "ORG"], **options)(nlp))
    assert [eg.reference.text.strip() for eg in examples] == ["Ann works at Acme .", "She sings .", "Bob left ."]
    assert {get_label_scope(eg.reference) for eg in examples} == {frozenset({"PER", "ORG"})}


def test_scoped_corpus_limit(people, nlp):
    assert len(list(create_scoped_corpus_reader_v1(people, labels=["PER", "ORG"], limit=1)(nlp))) == 1


def test_scoped_corpus_refuses_an_entity_outside_the_scope_naming_file_and_document(tmp_path, nlp):
    # document 0 is empty (spaCy skips it when making examples): the index is the file's
    docs = [Doc(nlp.vocab, words=[]), *people_docs(nlp.vocab)]
    path = write_docs(tmp_path / "people.spacy", docs)
    reader = create_scoped_corpus_reader_v1(path, labels=["PER"])
    with pytest.raises(ValueError) as err:
        list(reader(nlp))
    assert str(err.value) == (
        f"spacy-imbalance.ScopedCorpus.v1: {path}: document 1: the entity 'Acme' (tokens 3-4, in doc.ents) has the "
        "label 'ORG', outside the label scope ['PER']; add the label to the scope or remove the entity"
    )


def test_scoped_corpus_names_the_file_of_a_folder(tmp_path, nlp):
    folder = tmp_path / "corpus"
    folder.mkdir()
    write_docs(folder / "a.spacy", people_docs(nlp.vocab))
    write_docs(folder / "b.spacy", product_docs(nlp.vocab))
    reader = create_scoped_corpus_reader_v1(folder, labels=["PER", "ORG"])
    with pytest.raises(ValueError, match=rf"ScopedCorpus.v1: {folder / 'b.spacy'}: document 0: the entity 'iPhone'"):
        list(reader(nlp))


def test_scoped_corpus_checks_the_gold_span_group(tmp_path, nlp):
    doc = Doc(nlp.vocab, words=["An", "iPhone", "."])
    doc.spans["sc"] = SpanGroup(doc, name="sc", spans=[Span(doc, 1, 2, "PROD")])
    path = write_docs(tmp_path / "spans.spacy", [doc])
    assert len(list(create_scoped_corpus_reader_v1(path, labels=["PER"])(nlp))) == 1  # doc.ents only
    with pytest.raises(ValueError, match=r"document 0: the entity 'iPhone' \(tokens 1-2, in doc.spans\['sc'\]\)"):
        list(create_scoped_corpus_reader_v1(path, labels=["PER"], spans_key="sc")(nlp))


def test_scoped_corpus_reads_a_conll_file(tmp_path, nlp):
    path = write_conll(tmp_path, "Ann\tB-PER\nsings\tO\n\nAcme\tB-ORG\nsells\tO\n", "train.conll")
    examples = list(create_scoped_corpus_reader_v1(path, labels=["PER", "ORG"])(nlp))
    assert [get_label_scope(eg.reference) for eg in examples] == [frozenset({"PER", "ORG"})] * 2
    with pytest.raises(ValueError, match=rf"ScopedCorpus.v1: {path}: document 1: the entity 'Acme'"):
        list(create_scoped_corpus_reader_v1(path, labels=["PER"])(nlp))


def test_scoped_corpus_keeps_a_stored_scope_that_agrees_and_refuses_another(tmp_path, nlp):
    docs = product_docs(nlp.vocab)
    set_label_scope(docs[0], ["PROD", "LOC"])
    path = tmp_path / "stored.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    (eg,) = create_scoped_corpus_reader_v1(path, labels=["LOC", "PROD"])(nlp)
    assert get_label_scope(eg.reference) == frozenset({"PROD", "LOC"})
    with pytest.raises(ValueError, match=r"document 0: it already has the label scope \['LOC', 'PROD'\], not \['LOC', 'PER', 'PROD'\]"):
        list(create_scoped_corpus_reader_v1(path, labels=["LOC", "PROD", "PER"])(nlp))


def test_scoped_corpus_names_the_file_of_a_damaged_stored_scope(tmp_path, nlp):
    docs = product_docs(nlp.vocab)
    docs[0].user_data[SCOPE_KEY] = "PROD"
    path = tmp_path / "damaged.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    with pytest.raises(ValueError, match=rf"ScopedCorpus.v1: {path}: document 0: doc.user_data\['spacy-imbalance.label_scope'\] holds 'PROD', not a label scope"):
        list(create_scoped_corpus_reader_v1(path, labels=["PROD", "LOC"])(nlp))


def test_scoped_corpus_wraps_another_reader_and_names_the_example(people, nlp):
    inner = registry.readers.get("spacy.Corpus.v1")(path=people, gold_preproc=False)
    examples = list(create_scoped_corpus_reader_v1(corpus=inner, labels=["PER", "ORG"])(nlp))
    assert [get_label_scope(eg.reference) for eg in examples] == [frozenset({"PER", "ORG"})] * 2
    reader = create_scoped_corpus_reader_v1(corpus=inner, labels=["ORG"])
    with pytest.raises(ValueError, match=r"ScopedCorpus.v1: the corpus of its `corpus` reader: example 0: the entity 'Ann'"):
        list(reader(nlp))


def test_scoped_corpus_outside_a_masked_corpus_scopes_its_sentences(people, nlp):
    """The nesting to use: the scope outermost (MaskedCorpus splits sentences,
    which drops user data)."""
    config = corpus_config(("ScopedCorpus", 'labels = ["PER", "ORG"]'), ("MaskedCorpus", "p = 1.0"), path=people)
    examples = list(registry.resolve(config)["corpus"](nlp))
    assert [eg.reference.text.strip() for eg in examples] == ["Ann works at Acme .", "She sings .", "Bob left ."]
    assert {get_label_scope(eg.reference) for eg in examples} == {frozenset({"PER", "ORG"})}
    assert not any(eg.reference.ents for eg in examples)


@pytest.mark.parametrize(
    "labels,match",
    [
        ([], "ScopedCorpus.v1: labels: a label scope needs at least one label, got none"),
        (["PER", "PER"], "ScopedCorpus.v1: labels: a label scope names each label once, got 'PER' more than once"),
    ],
)
def test_scoped_corpus_refuses_bad_labels_when_built(people, labels, match):
    with pytest.raises(ValueError, match=match):
        create_scoped_corpus_reader_v1(people, labels=labels)


def test_scoped_corpus_needs_one_existing_source(people, tmp_path):
    with pytest.raises(ValueError, match="ScopedCorpus.v1: give exactly one of `path`"):
        create_scoped_corpus_reader_v1(labels=["PER"])
    with pytest.raises(ValueError, match="ScopedCorpus.v1: give exactly one of `path`"):
        create_scoped_corpus_reader_v1(people, corpus=lambda nlp: [], labels=["PER"])
    with pytest.raises(FileNotFoundError, match="ScopedCorpus.v1: no such corpus path: .*nope.spacy"):
        create_scoped_corpus_reader_v1(tmp_path / "nope.spacy", labels=["PER"])


COMBINED_CONFIG = """
[train]
@readers = "spacy-imbalance.CombinedCorpus.v1"

[train.corpora]

[train.corpora.products]
@readers = "spacy-imbalance.ScopedCorpus.v1"
path = "{products}"
labels = ["PROD", "LOC"]

[train.corpora.complete]
@readers = "spacy.Corpus.v1"
path = "{products}"
gold_preproc = false

[train.corpora.people]
@readers = "spacy-imbalance.ScopedCorpus.v1"
path = "{people}"
labels = ["PER", "ORG"]
"""


def test_combined_corpus_from_a_config_yields_each_reader_by_name(people, products, nlp):
    config = Config().from_str(COMBINED_CONFIG.format(people=people, products=products))
    reader = registry.resolve(config)["train"]
    examples = list(reader(nlp))
    # alphabetical: complete, people, products (not the config's order)
    assert [(eg.reference.text.strip(), get_label_scope(eg.reference)) for eg in examples] == [
        ("An iPhone in Paris", None),
        ("Ann works at Acme . She sings .", frozenset({"PER", "ORG"})),
        ("Bob left .", frozenset({"PER", "ORG"})),
        ("An iPhone in Paris", frozenset({"PROD", "LOC"})),
    ]
    # the next epoch reads the same
    assert [eg.reference.text for eg in reader(nlp)] == [eg.reference.text for eg in examples]


def test_combined_corpus_config_refuses_a_value_that_is_no_reader(people):
    config = Config().from_str(f'[train]\n@readers = "spacy-imbalance.CombinedCorpus.v1"\n\n[train.corpora]\npeople = "{people}"\n')
    with pytest.raises(ValueError, match=r"CombinedCorpus.v1: corpora 'people' are no readers: give each one as a block with @readers"):
        registry.resolve(config)


def test_combined_corpus_refuses_no_readers_and_non_readers():
    with pytest.raises(ValueError, match=r"CombinedCorpus.v1: corpora is empty: give at least one reader"):
        create_combined_corpus_reader_v1({})
    with pytest.raises(ValueError, match=r"CombinedCorpus.v1: corpora 'b' are no readers"):
        create_combined_corpus_reader_v1({"a": lambda nlp: [], "b": "train.spacy"})

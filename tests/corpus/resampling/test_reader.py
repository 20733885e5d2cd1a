"""The ResampledCorpus reader yields each sentence f_s times."""
import pytest
from spacy.tokens import Doc
from spacy.util import registry

from spacy_imbalance.corpus.resampling.reader import create_resampled_corpus_reader_v1

from .._corpus import assert_config_rejects, corpus_config, write_docs
from .test_resampling import EXPECTED, make_docs


@pytest.fixture
def corpus_path(tmp_path):
    return write_docs(tmp_path / "train.spacy", make_docs())


@pytest.mark.parametrize("method", list(EXPECTED))
def test_resampled_corpus_yields_each_sentence_f_times(corpus_path, method, nlp):
    reader = create_resampled_corpus_reader_v1(corpus_path, method=method)
    texts = [eg.reference.text for eg in reader(nlp)]
    assert len(texts) == sum(EXPECTED[method])
    originals = [doc.text for doc in make_docs()]
    assert [texts.count(text) for text in originals] == EXPECTED[method]
    assert [eg.reference.text for eg in reader(nlp)] == texts  # the same on the next epoch


def test_resampled_corpus_splits_sentences(tmp_path, nlp):
    doc = Doc(nlp.vocab, words=["Ann", "sings", ".", "It", "rains", "."], sent_starts=[True, False, False, True, False, False], ents=["B-PER", "O", "O", "O", "O", "O"])
    reader = create_resampled_corpus_reader_v1(write_docs(tmp_path / "two.spacy", [doc]), method="sC")
    # sentence 1 has one PER token: f = 2; sentence 2 none: f = 1
    assert [eg.reference.text.strip() for eg in reader(nlp)] == ["Ann sings .", "Ann sings .", "It rains ."]


def test_resampled_corpus_wraps_another_reader(corpus_path, nlp):
    inner = registry.readers.get("spacy.Corpus.v1")(path=corpus_path, limit=2, gold_preproc=False)
    reader = create_resampled_corpus_reader_v1(corpus=inner, method="sC")
    # the first two sentences only: f = 3 and 1
    assert len(list(reader(nlp))) == 4


def test_resampled_corpus_prints_the_size_increase_once(corpus_path, capsys, nlp):
    reader = create_resampled_corpus_reader_v1(corpus_path, method="sCRD")
    list(reader(nlp))
    list(reader(nlp))
    # spacy train builds the train reader twice (initialize, then training): still once
    list(create_resampled_corpus_reader_v1(corpus_path, method="sCRD")(nlp))
    lines = [line for line in capsys.readouterr().out.splitlines() if "ResampledCorpus" in line]
    assert len(lines) == 1
    assert "ResampledCorpus: sCRD, 4 sentences in, 14 out (size x3.50)" in lines[0]


def test_resampled_corpus_needs_path_or_corpus(corpus_path):
    with pytest.raises(ValueError, match="exactly one of"):
        create_resampled_corpus_reader_v1(method="sC")
    with pytest.raises(ValueError, match="exactly one of"):
        create_resampled_corpus_reader_v1(corpus_path, corpus=lambda nlp: [], method="sC")


def test_resampled_corpus_missing_path_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="ResampledCorpus.v1: no such corpus path: .*nope.spacy"):
        create_resampled_corpus_reader_v1(tmp_path / "nope.spacy", method="sC")


def test_resampled_corpus_config_rejects_unknown_method(corpus_path):
    assert_config_rejects("ResampledCorpus", 'method = "sCX"', path=corpus_path, match="method", error=Exception)


def test_resampled_corpus_nests_masked_and_subsampled_readers(toy_corpus, nlp):
    """The README's example: resample a masked 40-sentence subset, from a config."""
    from spacy_imbalance.corpus.masking.masking import mask_entities
    from spacy_imbalance.corpus.docs_io import load_docs
    from spacy_imbalance.corpus.resampling.resampling import sentence_weights
    from spacy_imbalance.corpus.subsampling.subsampling import subsample

    config = corpus_config(
        ("ResampledCorpus", 'method = "sCRD"'),
        ("MaskedCorpus", "p = 0.5", "seed = 3"),
        ("SubsampledCorpus", "n_sentences = 40", "seed = 1", "gold_preproc = true"),
        path=toy_corpus / "train.spacy",
        section="train",
    )
    reader = registry.resolve(config)["train"]
    examples = list(reader(nlp))
    # the same pipeline of pure functions on the same file
    expected = mask_entities(subsample(load_docs(toy_corpus / "train.spacy", nlp.vocab), 40, seed=1), 0.5, seed=3)
    weights = sentence_weights(expected, "sCRD")
    assert len(examples) == sum(weights)
    expected_ents = [[(e.start, e.end, e.label_) for e in doc.ents] for doc, w in zip(expected, weights) for _ in range(w)]
    assert [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in examples] == expected_ents
    # the masked entities travel with the examples, and are not in the gold any more
    n_masked = sum(len(eg.reference.spans["masked"]) for eg in examples)
    assert n_masked > 0
    for eg in examples:
        assert not {(s.start, s.end) for s in eg.reference.spans["masked"]} & {(e.start, e.end) for e in eg.reference.ents}
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]

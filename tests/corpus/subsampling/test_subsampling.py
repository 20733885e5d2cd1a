"""Low-resource and imbalanced subsets (spacy_imbalance.corpus.subsampling.subsampling), the
SubsampledCorpus reader and the ``subsample`` command."""
import random
import re

import pytest
from spacy.tokens import Doc, Span
from spacy.util import registry
from spacy.vocab import Vocab

from spacy_imbalance.corpus.docs_io import load_docs
from spacy_imbalance.corpus.subsampling.reader import create_subsampled_corpus_reader_v1
from spacy_imbalance.corpus.subsampling.subsampling import entity_tokens, subsample

from .._corpus import assert_config_rejects, corpus_config, invoke, plain, write_docs

TARGETS = [0.01, 0.02, 0.05, 0.10, 0.20]


def make_corpus(seed=0, vocab=None):
    """400 entity-free sentences of 10-20 tokens and 400 of 8-15 tokens with
    1-6 entity tokens: a sentence is at most 75 % entity tokens, a subset of
    100 can be anything from 0 % to well above 20 %."""
    vocab = vocab if vocab is not None else Vocab()
    rng = random.Random(seed)
    docs = []
    for i in range(800):
        if i % 2:
            length = rng.randint(10, 20)
            tags = ["O"] * length
        else:
            length = rng.randint(8, 15)
            n_ent = rng.randint(1, 6)
            tags = ["B-PER"] + ["I-PER"] * (n_ent - 1) + ["O"] * (length - n_ent)
        docs.append(Doc(vocab, words=[f"w{i}_{j}" for j in range(length)], ents=tags))
    return docs


def share(docs):
    """Entity tokens / tokens, counted from the IOB tags."""
    tokens = [t for doc in docs for t in doc]
    return sum(t.ent_iob_ in ("B", "I") for t in tokens) / len(tokens)


def positions(selected, docs):
    index = {id(doc): i for i, doc in enumerate(docs)}
    return [index[id(doc)] for doc in selected]


@pytest.fixture(scope="module")
def corpus():
    return make_corpus()


def test_uniform_subsample_is_a_seeded_subset_in_corpus_order(corpus):
    for n in (20, 50, 100, 800):
        selected = subsample(corpus, n, seed=3)
        assert len(selected) == n
        found = positions(selected, corpus)  # KeyError if not one of the input docs
        assert found == sorted(set(found))
    assert positions(subsample(corpus, 100, seed=3), corpus) == positions(subsample(corpus, 100, seed=3), corpus)
    assert positions(subsample(corpus, 100, seed=3), corpus) != positions(subsample(corpus, 100, seed=4), corpus)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", [0, 1])
def test_ratio_subsample_reaches_the_target(corpus, target, seed):
    selected = subsample(corpus, 100, entity_token_ratio=target, seed=seed)
    assert len(selected) == 100
    found = positions(selected, corpus)
    assert found == sorted(set(found))
    assert abs(share(selected) - target) <= 0.005


def test_ratio_subsample_honours_a_tighter_tolerance(corpus):
    selected = subsample(corpus, 200, entity_token_ratio=0.05, tolerance=0.001)
    assert abs(share(selected) - 0.05) <= 0.001


def test_unreachable_ratio_says_what_was_reached(corpus):
    with pytest.raises(ValueError) as err:
        subsample(corpus, 100, entity_token_ratio=0.9)
    message = str(err.value)
    assert "100 of the corpus' 800 sentences with 90.00 % entity tokens" in message
    match = re.search(r"the closest reached is ([0-9.]+) %", message)
    assert match and 30.0 < float(match.group(1)) < 75.0


@pytest.mark.parametrize(
    "n, settings, name",
    [
        (0, {}, "n_sentences"),
        (801, {}, "n_sentences is 801 but the corpus has only 800 sentences"),
        (10, {"entity_token_ratio": 0.0}, "entity_token_ratio"),
        (10, {"entity_token_ratio": 5.0}, "entity_token_ratio"),
        (10, {"entity_token_ratio": 0.05, "tolerance": 0.0}, "tolerance"),
    ],
)
def test_bad_settings_are_named(corpus, n, settings, name):
    with pytest.raises(ValueError, match=name):
        subsample(corpus, n, **settings)


def test_entity_tokens_count_overlapping_spans_once():
    doc = Doc(Vocab(), words="Ann met Bob in New York".split(), ents=["B-PER", "O", "B-PER", "O", "B-LOC", "I-LOC"])
    doc.spans["sc"] = [Span(doc, 4, 6, "LOC"), Span(doc, 5, 6, "CITY"), Span(doc, 0, 1, "PER")]
    assert entity_tokens(doc) == 4
    assert entity_tokens(doc, "sc") == 3
    assert entity_tokens(doc, "missing") == 0


# --- the SubsampledCorpus reader ---------------------------------------------


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory):
    return write_docs(tmp_path_factory.mktemp("subsampling") / "train.spacy", make_corpus())


@pytest.mark.parametrize("ratio", [None, 0.05])
def test_subsampled_corpus_same_every_epoch_and_equals_the_function(corpus_path, nlp, capsys, ratio):
    reader = create_subsampled_corpus_reader_v1(corpus_path, n_sentences=100, entity_token_ratio=ratio, seed=5)
    first = [eg.reference.text for eg in reader(nlp)]
    assert [eg.reference.text for eg in reader(nlp)] == first
    expected = subsample(load_docs(corpus_path), 100, entity_token_ratio=ratio, seed=5)
    assert first == [doc.text for doc in expected]
    # spacy train builds the train reader twice (initialize, then training): still once
    list(create_subsampled_corpus_reader_v1(corpus_path, n_sentences=100, entity_token_ratio=ratio, seed=5)(nlp))
    out = plain(capsys.readouterr().out)
    assert out.count("SubsampledCorpus") == 1
    assert f"SubsampledCorpus: 100 of 800 sentences, {100 * share(expected):.2f} % entity tokens (corpus {100 * share(load_docs(corpus_path)):.2f} %)" in out


def test_subsampled_corpus_data_errors_come_on_the_first_call(corpus_path, nlp):
    too_many = create_subsampled_corpus_reader_v1(corpus_path, n_sentences=1000)
    with pytest.raises(ValueError, match="SubsampledCorpus.v1: n_sentences is 1,000 but the corpus has only 800"):
        list(too_many(nlp))
    unreachable = create_subsampled_corpus_reader_v1(corpus_path, n_sentences=100, entity_token_ratio=0.9)
    with pytest.raises(ValueError, match="closest reached"):
        list(unreachable(nlp))


def test_subsampled_corpus_from_config(corpus_path, nlp):
    config = corpus_config(("SubsampledCorpus", "n_sentences = 50", "entity_token_ratio = 0.1", "seed = 2"), path=corpus_path)
    reader = registry.resolve(config)["corpus"]
    examples = list(reader(nlp))
    assert len(examples) == 50
    assert abs(share([eg.reference for eg in examples]) - 0.1) <= 0.005


@pytest.mark.parametrize(
    "setting, name",
    [("n_sentences = 0", "n_sentences"), ("entity_token_ratio = 1.5", "entity_token_ratio"), ("tolerance = 0", "tolerance")],
)
def test_subsampled_corpus_config_rejects_bad_settings_at_resolve(corpus_path, setting, name):
    lines = {"n_sentences": "n_sentences = 10"}
    lines[setting.split()[0]] = setting
    assert_config_rejects("SubsampledCorpus", *lines.values(), path=corpus_path, match=f"SubsampledCorpus.v1: {name}")


@pytest.mark.parametrize("tolerance", ["1e400", "1.0", "2.5"])
def test_subsampled_corpus_tolerance_must_be_below_one(corpus_path, tolerance):
    """Issue 31, L6: shares differ by less than 1, so a tolerance of 1 or
    more (inf too) accepted any selection as on target."""
    settings = ["n_sentences = 10", "entity_token_ratio = 0.1", f"tolerance = {tolerance}"]
    match = r"SubsampledCorpus.v1: tolerance must be in \(0, 1\) .*got (inf|1.0|2.5)"
    assert_config_rejects("SubsampledCorpus", *settings, path=corpus_path, match=match)


# --- the subsample command ---------------------------------------------------


def test_subsample_command(corpus_path, tmp_path):
    output = tmp_path / "small.spacy"
    result = invoke("subsample", corpus_path, output, "--n", 100, "--entity-token-ratio", 0.02, "--seed", 1)
    assert result.exit_code == 0, result.output
    written = load_docs(output)
    assert len(written) == 100
    assert abs(share(written) - 0.02) <= 0.005
    expected = subsample(load_docs(corpus_path), 100, entity_token_ratio=0.02, seed=1)
    assert [doc.text for doc in written] == [doc.text for doc in expected]


def test_subsample_command_errors(corpus_path, tmp_path):
    output = tmp_path / "out.spacy"
    result = invoke("subsample", tmp_path / "nope.spacy", output, "--n", 10)
    assert result.exit_code == 1
    assert "nope.spacy" in result.output
    result = invoke("subsample", corpus_path, output, "--n", 100, "--entity-token-ratio", 0.9)
    assert result.exit_code == 1
    assert "the closest reached is" in plain(result.output)
    result = invoke("subsample", corpus_path, output, "--n", 10, "--entity-token-ratio", 5)
    assert result.exit_code == 1
    assert "entity_token_ratio must be a fraction in (0, 1)" in plain(result.output)
    assert not output.exists()

"""Dai & Adel (2020) augmentation: LwTR, MR, SiS and their combination, as
functions, as the AugmentedCorpus reader and as `spacy-imbalance augment`."""
import random
import warnings

import pytest
from spacy.tokens import Doc, Span, SpanGroup
from spacy.util import registry
from spacy.vocab import Vocab

from spacy_imbalance.corpus.augmentation.augmentation import (
    METHODS,
    AugmentationPools,
    augment_docs,
    label_wise_token_replacement,
    mention_replacement,
    segments,
    shuffle_within_segments,
)
from spacy_imbalance.corpus.augmentation.reader import create_augmented_corpus_reader_v1
from spacy_imbalance.corpus.docs_io import load_docs
from spacy_imbalance.corpus.sentences import MISSING, TaggedSentence, mention_bounds, tagged_sentence

from .._corpus import assert_config_rejects, corpus_config, invoke, write_docs

# each type has exactly two mentions, of different lengths; the last token of s3 is unannotated
CORPUS = [
    ("Ann visited Paris .", ["B-PER", "O", "B-LOC", "O"]),
    ("Mary Jane Smith likes New York", ["B-PER", "I-PER", "I-PER", "O", "B-LOC", "I-LOC"]),
    ("It rains", ["O", "O"]),
    ("Nobody knows why", ["O", "O", MISSING]),
]


def make_docs(vocab=None, corpus=CORPUS, key=None, mirror=None):
    vocab = vocab if vocab is not None else Vocab()
    docs = []
    for text, tags in corpus:
        words = text.split()
        doc = Doc(vocab, words=words, ents=tags if key is None else None)
        if key is not None:
            doc.spans[key] = [Span(doc, s, e, label=label) for s, e, label in mention_bounds(tags)]
        if mirror is not None:
            doc.spans[mirror] = SpanGroup(doc, name=mirror, spans=list(doc.ents))
        docs.append(doc)
    return docs


def words_tags(docs, key=None):
    return [(s.words, s.tags) for s in (tagged_sentence(doc, key) for doc in docs)]


def big_corpus(n=60):
    rng = random.Random(7)
    names, places = ["Ann", "Bob", "Cy", "Di Lu", "Ed Al Bo"], ["Rome", "New York", "Oslo", "Le Mans"]
    corpus = []
    for _ in range(n):
        words, tags = [], []
        for _ in range(rng.randint(2, 6)):
            kind = rng.choice(["O", "PER", "LOC"])
            if kind == "O":
                words.append(rng.choice(["the", "a", "sat", "went", "to", "and", "."]))
                tags.append("O")
            else:
                mention = rng.choice(names if kind == "PER" else places).split()
                words.extend(mention)
                tags.extend([f"B-{kind}"] + [f"I-{kind}"] * (len(mention) - 1))
        corpus.append((" ".join(words), tags))
    return make_docs(corpus=corpus)


def test_augmentation_pools_skip_missing_tokens():
    pools = AugmentationPools.from_docs(make_docs())
    assert MISSING not in pools.tokens
    assert "why" not in [w for words in pools.tokens.values() for w in words]
    assert pools.tokens["B-PER"] == ["Ann", "Mary"]
    assert pools.tokens["I-LOC"] == ["York"]
    assert pools.mentions == {"PER": [("Ann",), ("Mary", "Jane", "Smith")], "LOC": [("Paris",), ("New", "York")]}


def test_augmentation_lwtr_p1_replaces_every_annotated_token_by_its_tags_pool():
    pools = AugmentationPools(tokens={"B-PER": ["Zed"], "I-PER": ["Zu"], "B-LOC": ["Lx"], "I-LOC": ["Ly"], "O": ["oo"]})
    for doc in make_docs():
        sentence = tagged_sentence(doc)
        new = label_wise_token_replacement(sentence, pools, 1.0, random.Random(0))
        assert new.tags == sentence.tags and new.spaces == sentence.spaces
        for old, word, tag in zip(sentence.words, new.words, new.tags):
            assert word == (old if tag == MISSING else pools.tokens[tag][0])
    # with the corpus' own pools: every word comes from the pool of its tag
    docs = make_docs()
    own = AugmentationPools.from_docs(docs)
    copies = augment_docs(docs, "label_wise_token_replacement", p=1.0, seed=3)[1::2]
    for doc, copy in zip(docs, copies):
        old, new = tagged_sentence(doc), tagged_sentence(copy)
        assert new.tags == old.tags
        for old_word, word, tag in zip(old.words, new.words, new.tags):
            assert word == old_word if tag == MISSING else word in own.tokens[tag]


@pytest.mark.parametrize("method", METHODS)
def test_augmentation_p0_changes_nothing(method):
    docs = make_docs()
    out = augment_docs(docs, method, p=0.0, n_copies=2, seed=5)
    assert len(out) == 3 * len(docs)
    assert words_tags(out) == [wt for wt in words_tags(docs) for _ in range(3)]
    assert [d.text for d in out[1::3]] == [d.text for d in docs]


def test_augmentation_mr_p1_replaces_mentions_by_same_type_pool_mentions():
    docs = make_docs()
    pools = AugmentationPools.from_docs(docs)
    lengths_changed = False
    for seed in range(10):
        copies = augment_docs(docs, "mention_replacement", p=1.0, seed=seed)[1::2]
        for doc, copy in zip(docs, copies):
            old, new = tagged_sentence(doc), tagged_sentence(copy)
            old_mentions, new_mentions = mention_bounds(old.tags), mention_bounds(new.tags)
            assert [m[2] for m in new_mentions] == [m[2] for m in old_mentions]
            for start, end, label in new_mentions:
                assert tuple(new.words[start:end]) in pools.mentions[label]
                assert new.tags[start:end] == [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
            inside = {i for s, e, _ in new_mentions for i in range(s, e)}
            old_inside = {i for s, e, _ in old_mentions for i in range(s, e)}
            # the context around the mentions is untouched, missing tags included
            assert [(w, t) for i, (w, t) in enumerate(zip(new.words, new.tags)) if i not in inside] == [
                (w, t) for i, (w, t) in enumerate(zip(old.words, old.tags)) if i not in old_inside
            ]
            lengths_changed |= len(new) != len(old)
    assert lengths_changed


def test_augmentation_mr_spaces():
    doc = Doc(Vocab(), words=["Ann", "visited", "Paris", "."], spaces=[True, True, False, False], ents=["B-PER", "O", "B-LOC", "O"])
    pools = AugmentationPools(mentions={"LOC": [("New", "York")], "PER": [("Ann",)]})
    new = mention_replacement(tagged_sentence(doc), pools, 1.0, random.Random(0))
    assert new.words == ["Ann", "visited", "New", "York", "."]
    assert new.spaces == [True, True, True, False, False]
    assert new.tags == ["B-PER", "O", "B-LOC", "I-LOC", "O"]


def test_augmentation_segments():
    tags = ["B-PER", "I-PER", "O", "O", MISSING, MISSING, "B-LOC", "B-LOC", "O", "B-PER", "I-PER"]
    assert segments(tags) == [(0, 2), (2, 4), (4, 6), (6, 7), (7, 8), (8, 9), (9, 11)]
    assert segments([]) == []


def test_augmentation_sis_p1_permutes_each_segment_and_keeps_labels():
    words = ["Mary", "Jane", "Smith", "saw", "the", "big", "dog", "x", "y", "in", "New", "York", "City"]
    tags = ["B-PER", "I-PER", "I-PER", "O", "O", "O", "O", MISSING, MISSING, "O", "B-LOC", "I-LOC", "I-LOC"]
    sentence = TaggedSentence(words, [True] * 12 + [False], tags)
    new = shuffle_within_segments(sentence, 1.0, random.Random(0))
    assert new.tags == tags and new.spaces == sentence.spaces
    for start, end in segments(tags):
        assert sorted(new.words[start:end]) == sorted(words[start:end])
    assert new.words != words
    # the exact output for seed 0 (Python's random is stable across versions)
    assert new.words == ["Smith", "Mary", "Jane", "saw", "big", "the", "dog", "x", "y", "in", "York", "New", "City"]


def test_augmentation_all_keeps_the_originals_first():
    docs = make_docs()
    before = words_tags(docs)
    out = augment_docs(docs, "all", p=1.0, seed=1)
    assert len(out) == 2 * len(docs)
    assert out[0::2] == docs  # the very same Doc objects
    assert words_tags(out[0::2]) == before == words_tags(docs)
    assert any(c != o for c, o in zip(words_tags(out[1::2]), before))


def test_augmentation_is_deterministic():
    docs = big_corpus()
    first = words_tags(augment_docs(docs, "all", seed=11))
    assert words_tags(augment_docs(docs, "all", seed=11)) == first
    assert words_tags(augment_docs(docs, "all", seed=12)) != first


def test_augmentation_spans_key_gold():
    docs = make_docs(key="sc")
    copies = augment_docs(docs, "mention_replacement", p=1.0, seed=4, spans_key="sc")[1::2]
    pools = AugmentationPools.from_docs(docs, spans_key="sc")
    for doc, copy in zip(docs, copies):
        assert not copy.has_annotation("ENT_IOB")  # the gold stays where it was
        assert [s.label_ for s in copy.spans["sc"]] == [s.label_ for s in doc.spans["sc"]]
        for span in copy.spans["sc"]:
            assert tuple(t.text for t in span) in pools.mentions[span.label_]
    assert any(len(c) != len(d) for c, d in zip(copies, docs))


def test_augmentation_mirrored_span_group_follows_the_entities():
    docs = make_docs(mirror="sc")
    copies = augment_docs(docs, "mention_replacement", p=1.0, seed=4)[1::2]
    assert any(len(c) != len(d) for c, d in zip(copies, docs))
    for copy in copies:
        assert [(s.start, s.end, s.label_) for s in copy.spans["sc"]] == [(e.start, e.end, e.label_) for e in copy.ents]
    # missing NER annotation stays missing in the copy
    assert copies[3][2].ent_iob_ == "" and copies[3][0].ent_iob_ == "O"


def test_augmentation_warns_once_about_other_span_groups():
    docs = make_docs(mirror="sc")
    for doc in docs:
        doc.spans["chunks"] = [Span(doc, 0, 1, label="NP")]
    with pytest.warns(UserWarning) as record:
        out = augment_docs(docs, "shuffle_within_segments", p=1.0, n_copies=2)
    assert len(record) == 1
    assert "8 annotation group(s)" in str(record[0].message) and "chunks" in str(record[0].message)
    assert all("chunks" not in copy.spans and "sc" in copy.spans for i, copy in enumerate(out) if i % 3)
    assert all("chunks" in doc.spans for doc in out[0::3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        augment_docs(make_docs(mirror="sc"), "all")  # only mirrored groups: no warning


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"method": "synonym_replacement"}, "method 'synonym_replacement'.*label_wise_token_replacement, mention_replacement, shuffle_within_segments, all"),
        ({"p": 1.5}, "probability p must be a number in \\[0, 1\\], got 1.5"),
        ({"p": -0.1}, "probability p"),
        ({"n_copies": 0}, r"n_copies must be an integer in \[1, 100\] .*, got 0"),
        ({"n_copies": 101}, r"n_copies must be an integer in \[1, 100\] .*, got 101"),
    ],
)
def test_augmentation_rejects_bad_settings(kwargs, message):
    settings = {"method": "all", **kwargs}
    with pytest.raises(ValueError, match=message):
        augment_docs(make_docs(), **settings)


@pytest.fixture
def corpus_path(tmp_path):
    return write_docs(tmp_path / "train.spacy", big_corpus())


def reader_words_tags(reader, nlp):
    return words_tags([eg.reference for eg in reader(nlp)])


def test_augmented_corpus_yields_each_sentence_and_its_copies(corpus_path, nlp, capsys):
    reader = create_augmented_corpus_reader_v1(corpus_path, method="all", p=0.5, seed=2)
    first = reader_words_tags(reader, nlp)
    assert len(first) == 2 * 60
    assert reader_words_tags(reader, nlp) == first  # the same on the next epoch
    # the same copies as the CLI would write for the same corpus
    expected = augment_docs(load_docs(corpus_path), "all", p=0.5, seed=2)
    assert [eg.reference.text for eg in reader(nlp)] == [doc.text for doc in expected]
    out = capsys.readouterr().out
    assert out.count("AugmentedCorpus") == 1
    # wasabi wraps long lines
    assert "AugmentedCorpus: all (p=0.5), 60 sentences in, 120 out (size x2.00)" in " ".join(out.split())


def test_augmented_corpus_resolves_from_config(corpus_path, nlp):
    config = corpus_config(("AugmentedCorpus", 'method = "mention_replacement"', "p = 1.0", "n_copies = 2"), path=corpus_path)
    reader = registry.resolve(config)["corpus"]
    assert (reader.method, reader.p, reader.n_copies) == ("mention_replacement", 1.0, 2)
    assert len(list(reader(nlp))) == 3 * 60


@pytest.mark.parametrize(
    "setting,message",
    [
        ("p = 1.5", "p must be"),
        ('method = "synonyms"', "method"),
        ("n_copies = 0", "n_copies"),
        # issue 31, M7: a billion copies are held in memory until the process is killed
        ("n_copies = 1000000000", r"n_copies must be an integer in \[1, 100\] .*got 1000000000"),
    ],
)
def test_augmented_corpus_config_rejects_bad_settings(corpus_path, setting, message):
    assert_config_rejects("AugmentedCorpus", setting, path=corpus_path, match=message, error=Exception)


def test_augment_cli_writes_the_file(tmp_path, corpus_path):
    out = tmp_path / "out" / "augmented.spacy"
    result = invoke("augment", corpus_path, out, "--method", "mention_replacement", "--p", "1", "--copies", "2", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert "before" in result.output and "after" in result.output
    written = load_docs(out)
    expected = augment_docs(load_docs(corpus_path), "mention_replacement", p=1.0, n_copies=2, seed=3)
    assert words_tags(written) == words_tags(expected)
    assert len(written) == 3 * 60


def test_augment_cli_errors(tmp_path, corpus_path):
    result = invoke("augment", tmp_path / "nope.spacy", tmp_path / "out.spacy")
    assert result.exit_code == 1
    assert "nope.spacy" in result.output
    result = invoke("augment", corpus_path, tmp_path / "out.spacy", "--p", "2")
    assert result.exit_code == 1
    # named as the option, checked before the corpus is read
    assert "--p must be in [0, 1], got 2.0" in result.output
    assert not (tmp_path / "out.spacy").exists()

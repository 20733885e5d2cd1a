"""Balanced undersampling (Akkasi et al. 2018), hand-computed."""
import re

import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config

from spacy_imbalance.corpus.undersampling.augmenter import create_balanced_undersampling_augmenter_v1
from spacy_imbalance.corpus.docs_io import write_docbin
from spacy_imbalance.corpus.sentences import bio_tags
from spacy_imbalance.corpus.undersampling.undersampling import kept_tokens, undersample_doc, undersample_docs

from .._corpus import corpus_config

O = "O"


def test_undersampling_grows_the_window_left_then_right():
    tags = [O, O, O, "B-PER", "I-PER", O, O, O, O, O]
    # 2 entity tokens, target 6: round 1 adds 2 and 5, round 2 adds 1 and 6
    assert kept_tokens(tags, 3) == [1, 2, 3, 4, 5, 6]


def test_undersampling_grows_every_block_in_turn():
    tags = ["B-X", O, O, O, O, O, O, "B-Y"]
    # target 6: round 1: block 0 adds 1 (no left), block 7 adds 6 (no right);
    # round 2: block 0-1 adds 2, block 6-7 adds 5
    assert kept_tokens(tags, 3) == [0, 1, 2, 5, 6, 7]


def test_undersampling_stops_at_the_sentence():
    assert kept_tokens(["B-X", "I-X", "B-Y", "I-Y", O], 3) == [0, 1, 2, 3, 4]
    assert kept_tokens(["B-X"], 3) == [0]  # a one-token sentence


def test_undersampling_non_integer_ratio_rounds_up():
    # 1 entity token x 1.5 = 1.5 -> 2 tokens: the left neighbour comes first
    assert kept_tokens([O, "B-X", O], 1.5) == [0, 1]
    assert kept_tokens([O, "B-X", O], 1) == [1]


def test_undersampling_drops_sentences_without_entities():
    assert kept_tokens([O, O, "", O], 3) == []
    assert kept_tokens([], 3) == []


def test_undersampling_missing_tokens_are_context_not_entities():
    assert kept_tokens(["", "B-X", "", "", ""], 2) == [0, 1]


def test_undersampling_rejects_ratio_below_one():
    with pytest.raises(ValueError, match="ratio must be >= 1"):
        kept_tokens(["B-X"], 0.5)
    with pytest.raises(ValueError, match="ratio must be >= 1"):
        create_balanced_undersampling_augmenter_v1(ratio=0.5)


@pytest.mark.parametrize("ratio", [float("inf"), float("nan"), 0.5, "3"], ids=["inf", "nan", "0.5", "str"])
def test_undersampling_rejects_ratio_not_finite(ratio):
    message = f"ratio must be >= 1 and finite (kept tokens per entity token), got {ratio!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        kept_tokens(["B-X", O], ratio)
    with pytest.raises(ValueError, match=re.escape(message)):
        undersample_docs([Doc(Vocab(), words=["a"], ents=["B-X"])], ratio)
    with pytest.raises(ValueError, match=re.escape(f"balanced_undersampling: {message}")):
        create_balanced_undersampling_augmenter_v1(ratio=ratio)


@pytest.mark.parametrize("value,shown", [("Infinity", "inf"), ("1e999", "inf"), ("NaN", "nan"), ("inf", "'inf'")])
def test_undersampling_augmenter_rejects_ratio_not_finite_in_config(value, shown):
    config = Config().from_str(f'[augmenter]\n@augmenters = "spacy-imbalance.balanced_undersampling.v1"\nratio = {value}\n')
    with pytest.raises(ValueError, match=re.escape(f"balanced_undersampling: ratio must be >= 1 and finite (kept tokens per entity token), got {shown}")):
        registry.resolve(config)


@pytest.mark.parametrize("ratio", [1e308, 1000.5])
def test_undersampling_rejects_a_ratio_above_the_bound(ratio):
    """Issue 31, M6: 1e308 times the entity tokens overflowed: OverflowError."""
    with pytest.raises(ValueError, match=re.escape(f"got {ratio!r}: give a ratio in [1, 1000]")):
        undersample_docs([Doc(Vocab(), words=["a"], ents=["B-X"])], ratio)
    with pytest.raises(ValueError, match=re.escape("balanced_undersampling: ratio must be >= 1 and finite")):
        create_balanced_undersampling_augmenter_v1(ratio=ratio)


def test_undersampling_at_the_ratio_bound_keeps_the_sentence():
    doc = Doc(Vocab(), words=["a", "b", "c"], ents=["O", "B-X", "O"])
    assert [t.text for t in undersample_doc(doc, 1000)[0]] == ["a", "b", "c"]


def test_undersample_doc_counts_a_zero_length_span_as_lost():
    """A zero-length span of another group has no token to move: it was an IndexError."""
    doc = Doc(Vocab(), words=["a", "b", "c", "d"], ents=["O", "B-X", "O", "O"])
    doc.spans["other"] = [Span(doc, 1, 2, "X"), Span(doc, 3, 3, "Y")]
    short, lost = undersample_doc(doc, 1.0)
    assert [t.text for t in short] == ["b"]
    assert lost == 1
    assert [(s.start, s.end, s.label_) for s in short.spans["other"]] == [(0, 1, "X")]


def make_doc(vocab):
    words = ["I", "saw", "the", "new", "Star", "Wars", "film", "in", "Paris", "yesterday", "with", "friends", "."]
    doc = Doc(vocab, words=words, spaces=[True] * 11 + [False, False])
    doc.ents = [Span(doc, 4, 6, "movie"), Span(doc, 8, 9, "geo-loc")]
    doc.spans["sc"] = list(doc.ents)
    doc.spans["masked"] = [Span(doc, 0, 1, "person"), Span(doc, 9, 11, "x")]
    return doc


def test_undersample_doc_keeps_gold_and_mirrors():
    nlp = spacy.blank("en")
    doc = make_doc(nlp.vocab)
    # 3 entity tokens -> 9 kept. Round 1: block 4-5 adds 3 and 6, block 8 adds 7 and 9;
    # round 2: the single block 3-9 adds 2 and 10
    assert kept_tokens(bio_tags(doc), 3) == [2, 3, 4, 5, 6, 7, 8, 9, 10]
    short, lost = undersample_doc(doc, 3)
    assert short.text == "the new Star Wars film in Paris yesterday with "
    assert [(e.text, e.label_) for e in short.ents] == [("Star Wars", "movie"), ("Paris", "geo-loc")]
    assert [(s.text, s.label_) for s in short.spans["sc"]] == [("Star Wars", "movie"), ("Paris", "geo-loc")]
    # the other span group is carried over where its tokens survive: "I" is dropped and counted
    assert [(s.text, s.label_) for s in short.spans["masked"]] == [("yesterday with", "x")]
    assert lost == 1


def test_undersample_doc_separates_words_around_a_gap():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["A", "b", "c", "d", "e", "f", "G"], spaces=[False] * 7, ents=["B-X"] + ["O"] * 5 + ["B-Y"])
    short, _ = undersample_doc(doc, 2)
    assert [t.text for t in short] == ["A", "b", "f", "G"]
    assert short.text == "Ab fG"  # a space where tokens were dropped, none elsewhere


def test_undersample_docs_drops_entity_free_sentences():
    nlp = spacy.blank("en")
    docs = [make_doc(nlp.vocab), Doc(nlp.vocab, words=["no", "entity"]), Doc(nlp.vocab, words=[])]
    out, _ = undersample_docs(docs, 3)
    assert len(out) == 1


def test_undersampling_augmenter_in_a_corpus(tmp_path):
    nlp = spacy.blank("en")
    docs = [make_doc(nlp.vocab), Doc(nlp.vocab, words=["no", "entity", "here"])]
    write_docbin(docs, tmp_path / "train.spacy")
    augmenter = ("spacy-imbalance.balanced_undersampling.v1", "ratio = 3")
    config = corpus_config(("spacy.Corpus.v1", "gold_preproc = true"), path=tmp_path / "train.spacy", augmenter=augmenter)
    corpus = registry.resolve(config)["corpus"]
    with pytest.warns(UserWarning, match="other than the gold lose tokens"):
        examples = list(corpus(nlp))
    assert len(examples) == 1
    eg = examples[0]
    assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
    assert len(eg.reference) == 9
    assert [e.text for e in eg.reference.ents] == ["Star Wars", "Paris"]


def test_undersampling_augmenter_splits_multi_sentence_docs():
    nlp = spacy.blank("en")
    doc = Doc(
        nlp.vocab, words=["Ann", "sings", ".", "It", "rains", ".", "Bob", "runs", "fast", "now", "!"],
        sent_starts=[True, False, False, True, False, False, True, False, False, False, False],
        ents=["B-PER", O, O, O, O, O, "B-PER", O, O, O, O],
    )
    from spacy.training import Example

    augmenter = create_balanced_undersampling_augmenter_v1(ratio=2)
    out = list(augmenter(nlp, Example(nlp.make_doc(doc.text), doc)))
    assert [eg.reference.text.strip() for eg in out] == ["Ann sings", "Bob runs"]


def test_undersampling_augmenter_rejects_bad_ratio_in_config(tmp_path):
    config = Config().from_str(
        """
        [augmenter]
        @augmenters = "spacy-imbalance.balanced_undersampling.v1"
        ratio = 0.2
        """
    )
    with pytest.raises(ValueError, match="ratio must be >= 1"):
        registry.resolve(config)

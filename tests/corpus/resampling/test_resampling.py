"""Resampling frequencies f_s (Eq. 1-4 of the sentence-level resampling paper),
hand-computed on a made-up corpus."""
import math

import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.corpus.resampling.resampling import METHODS, rareness, sentence_weights

# s1: 4 tokens, PER over 2 tokens     s2: 2 tokens, no entity
# s3: 1 token, LOC (a type present once)
# s4: 9 tokens, PER, PER (one token each), ORG over 3 tokens
SENTENCES = [
    (4, [(0, 2, "PER")]),
    (2, []),
    (1, [(0, 1, "LOC")]),
    (9, [(0, 1, "PER"), (2, 3, "PER"), (4, 7, "ORG")]),
]
# N = 16 tokens; PER 4 tokens, LOC 1, ORG 3
R = {"PER": -math.log2(4 / 16), "LOC": -math.log2(1 / 16), "ORG": -math.log2(3 / 16)}  # 2, 4, 2.415
S4 = R["PER"] * 2 + R["ORG"] * 3  # 11.245
EXPECTED = {
    "none": [1, 1, 1, 1],
    "sC": [1 + 2, 1, 1 + 1, 1 + 5],
    "sCR": [1 + math.ceil(math.sqrt(2 * 2)), 1, 1 + math.ceil(math.sqrt(4 * 1)), 1 + math.ceil(math.sqrt(S4))],  # 3, 1, 3, 5
    "sCRD": [1 + math.ceil(2 * 2 / 2), 1, 1 + math.ceil(4 / 1), 1 + math.ceil(S4 / 3)],  # 3, 1, 5, 5
    "nsCRD": [
        1 + math.ceil(2 * math.sqrt(2) / 2),
        1,
        1 + math.ceil(4 * 1 / 1),
        1 + math.ceil((2 * math.sqrt(2) + R["ORG"] * math.sqrt(3)) / 3),
    ],  # 3, 1, 5, 4
}


def make_docs(key=None):
    vocab = Vocab()
    docs = []
    for length, spans in SENTENCES:
        doc = Doc(vocab, words=[f"w{i}" for i in range(length)])
        made = [Span(doc, s, e, label=label) for s, e, label in spans]
        if key is None:
            doc.ents = made
        else:
            doc.spans[key] = made
        docs.append(doc)
    return docs


def test_resampling_rareness_hand_computed():
    assert rareness(make_docs()) == pytest.approx(R)


def test_resampling_expected_values_are_the_hand_values():
    # guard the table above against typos: the literal values worked out by hand
    assert EXPECTED["sCR"] == [3, 1, 3, 5]
    assert EXPECTED["sCRD"] == [3, 1, 5, 5]
    assert EXPECTED["nsCRD"] == [3, 1, 5, 4]


@pytest.mark.parametrize("method", METHODS)
def test_resampling_sentence_weights(method):
    assert sentence_weights(make_docs(), method) == EXPECTED[method]


@pytest.mark.parametrize("method", METHODS)
def test_resampling_spans_key_gives_the_same(method):
    assert sentence_weights(make_docs(key="gold"), method, spans_key="gold") == EXPECTED[method]


def test_resampling_count_mentions():
    # s1: 1 PER mention; s3: 1 LOC; s4: 2 PER + 1 ORG
    assert sentence_weights(make_docs(), "sC", count="mentions") == [2, 1, 2, 4]
    # r_t from mentions: PER 3 of 16, LOC 1, ORG 1
    assert rareness(make_docs(), count="mentions") == pytest.approx(
        {"PER": -math.log2(3 / 16), "LOC": 4.0, "ORG": 4.0}
    )


def test_resampling_ceil_tolerates_float_error():
    # r = 2 exactly and c = 2 give sqrt(4) = 2: f = 3, not 4
    vocab = Vocab()
    docs = []
    for label_tokens in ((0, 2), None):
        doc = Doc(vocab, words=["a", "b", "c", "d"] * (1 if label_tokens else 3))
        if label_tokens:
            doc.ents = [Span(doc, *label_tokens, label="X")]
        docs.append(doc)
    # N = 16, X has 2 tokens: r = -log2(2/16) = 3; sCR = 1 + ceil(sqrt(6)) = 4
    assert sentence_weights(docs, "sCR") == [1 + math.ceil(math.sqrt(6)), 1]
    assert sentence_weights(docs, "sCR", rareness={"X": 2.0}) == [3, 1]


def test_resampling_no_entities_anywhere_gives_ones():
    vocab = Vocab()
    docs = [Doc(vocab, words=["a", "b"]), Doc(vocab, words=[])]
    assert rareness(docs) == {}
    assert sentence_weights(docs, "none") == [1, 1]
    for method in METHODS[1:]:
        with pytest.warns(UserWarning, match=f"Resampling with '{method}': none of the 2 sentences has an entity"):
            assert sentence_weights(docs, method) == [1, 1]


def test_resampling_unknown_method_lists_the_valid_ones():
    with pytest.raises(ValueError, match="sC, sCR, sCRD, nsCRD"):
        sentence_weights(make_docs(), "sCX")


def test_resampling_missing_rareness_is_an_error():
    with pytest.raises(ValueError, match="ORG"):
        sentence_weights(make_docs(), "sCR", rareness={"PER": 2.0, "LOC": 4.0})

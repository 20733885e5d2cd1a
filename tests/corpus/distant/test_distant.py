"""Distant supervision by dictionary matching (spacy_imbalance.corpus.distant.distant):
the dictionary, the matching, the relabelled copies and their precision/recall."""
import math

import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.corpus.distant import (
    LabelQuality,
    build_dictionary,
    check_distant_settings,
    distant_annotate,
    distant_supervision,
    label_quality,
    match_dictionary,
)

VOCAB = Vocab()


def make_doc(text, ents=(), missing=()):
    """A doc of space-separated words; ents and missing are (start, end[, label]) token offsets."""
    doc = Doc(VOCAB, words=text.split()) if text else Doc(VOCAB, words=[])
    doc.set_ents(
        [Span(doc, s, e, label=l) for s, e, l in ents],
        missing=[doc[s:e] for s, e in missing],
        default="outside",
    )
    return doc


def ents(doc):
    return [(span.start, span.end, span.label_) for span in doc.ents]


def annotation(doc):
    return (
        [t.text for t in doc],
        [(t.ent_iob_, t.ent_type_) for t in doc],
        {key: [(s.start, s.end, s.label_) for s in group] for key, group in doc.spans.items()},
    )


def ten_entities():
    """Ten docs with one distinct entity each: city0 ... city9, label LOC."""
    return [make_doc(f"to city{i} now", [(1, 2, "LOC")]) for i in range(10)]


# --- the dictionary ------------------------------------------------------


@pytest.mark.parametrize("fraction,size", [(0.5, 5), (0.3, 3), (0.25, 3), (0.7, 7), (1.0, 10)])
def test_dictionary_holds_ceil_fraction_of_the_mentions(fraction, size):
    dictionary = build_dictionary(ten_entities(), fraction, seed=3)
    assert len(dictionary) == size  # ⌈fraction·10⌉, 0.7·10 without overshoot
    assert set(dictionary) <= {(f"city{i}",) for i in range(10)}
    assert set(dictionary.values()) == {"LOC"}


def test_dictionary_is_seeded():
    docs = ten_entities()
    assert build_dictionary(docs, 0.5, seed=1) == build_dictionary(docs, 0.5, seed=1)
    assert len({tuple(sorted(build_dictionary(docs, 0.5, seed=s))) for s in range(10)}) > 1


def test_dictionary_draws_mentions_so_frequent_entities_are_likely_in():
    """"paris" has 9 of the 10 mentions: a draw of one mention is almost always it."""
    docs = [make_doc("in Paris", [(1, 2, "LOC")]) for _ in range(9)] + [make_doc("in Lyon", [(1, 2, "LOC")])]
    hits = sum(("paris",) in build_dictionary(docs, 0.1, seed=s) for s in range(100))
    assert hits > 75


def test_an_ambiguous_string_gets_its_majority_type_and_ties_the_first_label():
    docs = [
        make_doc("Washington spoke", [(0, 1, "PER")]),
        make_doc("in Washington", [(1, 2, "LOC")]),
        make_doc("WASHINGTON said", [(0, 1, "PER")]),
        make_doc("Jordan and Jordan", [(0, 1, "PER"), (2, 3, "LOC")]),
    ]
    dictionary = build_dictionary(docs, 1.0)
    assert dictionary == {("washington",): "PER", ("jordan",): "LOC"}


def test_dictionary_keys_are_lowercased_tokens_and_short_entries_are_skipped():
    docs = [make_doc("New York and - and I", [(0, 2, "LOC"), (3, 4, "MISC"), (5, 6, "PER")])]
    assert build_dictionary(docs, 1.0) == {("new", "york"): "LOC"}
    assert build_dictionary(docs, 1.0, min_length=1) == {("new", "york"): "LOC", ("-",): "MISC", ("i",): "PER"}
    # the tokens joined by one space: "new york" has 8 characters
    assert build_dictionary(docs, 1.0, min_length=8) == {("new", "york"): "LOC"}
    assert build_dictionary(docs, 1.0, min_length=9) == {}


def test_dictionary_from_a_span_group():
    doc = make_doc("Kate met Bob")
    doc.spans["gold"] = [Span(doc, 0, 1, label="PER")]
    assert build_dictionary([doc], 1.0, spans_key="gold") == {("kate",): "PER"}
    assert build_dictionary([doc], 1.0) == {}


# --- matching ------------------------------------------------------------


def test_longest_match_wins():
    dictionary = {("new",): "LOC", ("new", "york"): "LOC", ("new", "york", "times"): "ORG"}
    doc = make_doc("the New York Times in New York is new")
    spans = match_dictionary(doc, dictionary)
    assert [(s.start, s.end, s.label_) for s in spans] == [(1, 4, "ORG"), (5, 7, "LOC"), (8, 9, "LOC")]


def test_matching_is_greedy_left_to_right():
    """At "ab" the entry "ab cd" wins; "cd ef gh", longer but starting inside it, is never tried."""
    dictionary = {("ab", "cd"): "X", ("cd", "ef", "gh"): "Y"}
    spans = match_dictionary(make_doc("ab cd ef gh"), dictionary)
    assert [(s.start, s.end, s.label_) for s in spans] == [(0, 2, "X")]


def test_matching_is_case_insensitive_on_whole_tokens():
    dictionary = build_dictionary([make_doc("in Paris", [(1, 2, "LOC")])], 1.0)
    doc = make_doc("PARIS paris Paris Parisian")
    assert [(s.start, s.end) for s in match_dictionary(doc, dictionary)] == [(0, 1), (1, 2), (2, 3)]


# --- relabelling ---------------------------------------------------------


def test_matches_become_entities_and_every_other_token_o():
    dictionary = {("kate",): "PER"}
    gold = make_doc("Kate met Bob in Rome", [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")], missing=[(3, 4)])
    (distant,) = distant_annotate([gold], dictionary)
    assert ents(distant) == [(0, 1, "PER")]
    # Bob and Rome (absent from the dictionary) and the missing "in" are all O
    assert [t.ent_iob_ for t in distant] == ["B", "O", "O", "O", "O"]


def test_the_input_docs_are_not_modified_and_span_groups_are_dropped():
    gold = make_doc("Kate met Bob", [(0, 1, "PER"), (2, 3, "PER")], missing=[(1, 2)])
    gold.spans["sc"] = list(gold.ents)
    before = annotation(gold)
    (distant,) = distant_annotate([gold], {("bob",): "PER"})
    assert annotation(gold) == before
    assert ents(distant) == [(2, 3, "PER")] and dict(distant.spans) == {}
    (in_group,) = distant_annotate([gold], {("bob",): "PER"}, spans_key="sc")
    assert [(s.start, s.end, s.label_) for s in in_group.spans["sc"]] == [(2, 3, "PER")]
    assert annotation(gold) == before


def test_empty_docs_work():
    docs = [make_doc(""), make_doc("in Paris", [(1, 2, "LOC")]), make_doc("")]
    distant, dictionary = distant_supervision(docs, 1.0)
    assert [len(doc) for doc in distant] == [0, 2, 0]
    assert ents(distant[1]) == [(1, 2, "LOC")]
    assert distant_annotate([make_doc("")], {})[0].ents == ()
    assert label_quality(docs, distant) == LabelQuality(n_gold=1, n_distant=1, n_correct=1)
    assert build_dictionary([make_doc("")], 0.5) == {}


def test_distant_supervision_is_incomplete_and_noisy():
    """Gold: Paris (LOC) twice, Jordan PER twice and LOC once, Lyon (LOC) once;
    'paris' also unlabeled in a lowercase sentence. With every mention in the
    dictionary every gold span is matched, but the lowercase 'paris' is
    labelled too and the LOC Jordan gets the majority type PER."""
    docs = [
        make_doc("Paris and Jordan", [(0, 1, "LOC"), (2, 3, "PER")]),
        make_doc("Jordan visited Paris", [(0, 1, "PER"), (2, 3, "LOC")]),
        make_doc("flights to Jordan", [(2, 3, "LOC")]),
        make_doc("plaster of paris"),
        make_doc("Lyon", [(0, 1, "LOC")]),
    ]
    distant, dictionary = distant_supervision(docs, 1.0)
    assert dictionary == {("paris",): "LOC", ("jordan",): "PER", ("lyon",): "LOC"}
    assert [ents(doc) for doc in distant] == [
        [(0, 1, "LOC"), (2, 3, "PER")],
        [(0, 1, "PER"), (2, 3, "LOC")],
        [(2, 3, "PER")],  # wrong type
        [(2, 3, "LOC")],  # no entity
        [(0, 1, "LOC")],
    ]
    quality = label_quality(docs, distant)
    # 6 gold, 7 labelled, 5 right
    assert quality == LabelQuality(n_gold=6, n_distant=7, n_correct=5)
    assert quality.precision == pytest.approx(5 / 7) and quality.recall == pytest.approx(5 / 6)


def test_label_quality_by_hand():
    gold = [
        make_doc("Kate met Bob in Rome", [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")]),
        make_doc("Bob Dylan sang", [(0, 2, "PER")]),
    ]
    distant = [
        make_doc("Kate met Bob in Rome", [(0, 1, "PER"), (4, 5, "ORG")]),  # 1 right, 1 wrong type
        make_doc("Bob Dylan sang", [(0, 1, "PER")]),  # wrong boundary
    ]
    quality = label_quality(gold, distant)
    assert quality == LabelQuality(n_gold=4, n_distant=3, n_correct=1)
    assert quality.precision == pytest.approx(1 / 3) and quality.recall == pytest.approx(1 / 4)
    assert quality.f == pytest.approx(2 * (1 / 3) * (1 / 4) / (1 / 3 + 1 / 4))
    assert label_quality([], []) == LabelQuality(0, 0, 0) and LabelQuality(0, 0, 0).precision == 0.0
    with pytest.raises(ValueError, match="2 gold docs but 1 distant"):
        label_quality(gold, distant[:1])
    with pytest.raises(ValueError, match="doc 0 has other tokens"):
        label_quality(gold[:1], distant[1:])


# --- settings ------------------------------------------------------------


@pytest.mark.parametrize(
    "settings,message",
    [
        ((0, 0, 2), r"dictionary_fraction must be a fraction in \(0, 1\] of the gold mentions \(0.5 for half\), got 0"),
        ((1.5, 0, 2), "dictionary_fraction must be .*got 1.5"),
        ((math.nan, 0, 2), "dictionary_fraction must be .*got nan"),
        ((True, 0, 2), "dictionary_fraction must be .*got True"),
        (("0.5", 0, 2), "dictionary_fraction must be .*got '0.5'"),
        ((0.5, 1.5, 2), "seed must be an integer, got 1.5"),
        ((0.5, None, 2), "seed must be an integer, got None"),
        ((0.5, 0, 0), r"min_length must be an integer in \[1, 100\] \(characters of a dictionary entry; .*\), got 0"),
        ((0.5, 0, 2.0), "min_length must be an integer in .*got 2.0"),
    ],
)
def test_settings_are_validated(settings, message):
    with pytest.raises(ValueError, match=message):
        check_distant_settings(*settings)
    fraction, seed, min_length = settings
    with pytest.raises(ValueError, match=message):
        build_dictionary(ten_entities(), fraction, seed=seed, min_length=min_length)

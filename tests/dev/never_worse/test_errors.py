"""The kinds of a trial's false positives (dev/never_worse/errors.py), by hand."""
import spacy
from spacy.tokens import Span
from spacy.training import Example

from dev.never_worse.errors import KINDS, error_kinds, errors_table

NLP = spacy.blank("en")


def _example(words, gold, predicted):
    reference = NLP.make_doc(" ".join(words))
    reference.ents = [Span(reference, s, e, label=label) for s, e, label in gold]
    doc = NLP.make_doc(" ".join(words))
    doc.ents = [Span(doc, s, e, label=label) for s, e, label in predicted]
    return Example(doc, reference)


def test_each_kind_by_hand():
    words = "martin short met lil wayne in new york today".split()
    gold = [(0, 2, "person"), (3, 5, "person"), (6, 8, "location")]
    examples = [
        _example(words, gold, [(0, 1, "person"), (3, 5, "group"), (6, 8, "location")]),  # inside, other label, a TP
        _example(words, gold, [(1, 3, "person"), (5, 8, "location"), (8, 9, "person")]),  # crossing, around, apart
        _example(words, [], [(0, 2, "person")]),  # apart: no gold in the sentence
    ]
    counts = error_kinds(examples)
    assert counts == {"other label": 1, "inside gold": 1, "around gold": 1, "crossing gold": 1, "apart from gold": 2, "fp": 6}


def test_the_table_follows_the_trials_order_and_skips_uncounted():
    counted = {"b": {"model": "m", **dict.fromkeys(KINDS, 1), "fp": 5}, "a": {"model": "m", **dict.fromkeys(KINDS, 0), "fp": 0}}
    lines = errors_table(counted, ["a", "c", "b"]).splitlines()
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| a", "| b"]
    assert lines[3] == "| b | 5 | 1 | 1 | 1 | 1 | 1 |"
    assert errors_table({}, ["a"]) == "No trial's false positives counted yet.\n"

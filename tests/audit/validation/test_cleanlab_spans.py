"""cleanlab's flagged tokens as spans (audit/validation/cleanlab_spans.py), and the
tagger probabilities they are read from (token_folds.py)."""
import sys

import numpy
import pytest

from spacy_imbalance.audit.validation.cleanlab_spans import cleanlab_spans, group_flagged, require_cleanlab, span_label, tag_columns
from spacy_imbalance.audit.validation.token_folds import corpus_probabilities


def test_audit_validation_group_flagged():
    issues = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 2)]
    given = [[0, 0, 0, 1, 0], [0, 0, 0]]  # token 3 of doc 0 is a B- tag: not a missed entity
    scores = [[0.9, 0.2, 0.4, 0.1, 0.3], [0.05, 0.9, 0.3]]
    spans = group_flagged(issues, given, scores)
    # runs of flagged O tokens, scored by their lowest token, lowest first; ties by position
    assert spans == [(1, 0, 1, 0.05), (0, 1, 3, 0.2), (0, 4, 5, 0.3), (1, 2, 3, 0.3)]
    assert group_flagged([], given, scores) == []


def test_audit_validation_span_label_and_tag_columns():
    tags = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    probs = numpy.array([[0.5, 0.3, 0.0, 0.2, 0.0], [0.2, 0.0, 0.3, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0, 0.0]])
    # LOC 0.3 + 0.3 = 0.6 < PER 0.2 + 0.5 = 0.7 over tokens 0-1
    assert span_label(probs, 0, 2, tags) == "PER"
    assert span_label(probs, 2, 3, tags) == "LOC"
    # a BILUO fold model with one of the two labels, mapped into the corpus's BIO tags
    assert tag_columns(["O", "B-PER", "I-PER", "L-PER", "U-PER"], tags) == [0, 3, 4, 4, 3]


def test_audit_validation_cleanlab_spans():
    pytest.importorskip("cleanlab")
    tags = ["O", "B-X", "I-X"]
    confident = {0: [0.9, 0.05, 0.05], 1: [0.05, 0.9, 0.05], 2: [0.05, 0.05, 0.9]}
    given = [[0, 1, 2, 0] if i % 2 else [0, 0, 0, 0] for i in range(30)] + [[]]
    probs = [numpy.array([confident[t] for t in g]) for g in given[:-1]] + [numpy.zeros((0, 3))]
    # document 4: tokens 1-2 tagged O, which the model confidently reads as an X entity
    probs[4] = numpy.array([confident[0], [0.02, 0.96, 0.02], [0.02, 0.02, 0.96], confident[0]])
    spans, n_tokens = cleanlab_spans(given, probs, tags)
    assert n_tokens == 2
    assert [span for span, _ in spans] == [(4, 1, 3, "X")]
    assert spans[0][1] == pytest.approx(0.02)  # self-confidence of the given O


def test_without_cleanlab_the_message_names_the_extra(monkeypatch):
    # None in sys.modules: importing the package (or a module of it imported before) raises ImportError
    for name in ["cleanlab", *(m for m in sys.modules if m.startswith("cleanlab."))]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError) as err:
        require_cleanlab()
    assert str(err.value) == "--cleanlab compares with cleanlab, which is not installed: pip install 'spacy-imbalance[cleanlab]'"


def test_a_fold_models_tags_add_into_the_corpus_bio_columns():
    tags = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    # a BILUO model of PER alone: O, B-, I-, L-, U-
    columns = numpy.asarray(tag_columns(["O", "B-PER", "I-PER", "L-PER", "U-PER"], tags), dtype="int32")
    logits = numpy.log(numpy.array([[0.1, 0.2, 0.3, 0.3, 0.1], [0.5, 0.1, 0.2, 0.1, 0.1]]))
    probs = corpus_probabilities(logits, columns, len(tags))
    assert probs.dtype == numpy.float64 and probs.shape == (2, 5)
    # B- and U- into B-PER, I- and L- into I-PER; LOC's columns stay empty
    assert probs[0] == pytest.approx([0.1, 0.0, 0.0, 0.3, 0.6])
    assert probs[1] == pytest.approx([0.5, 0.0, 0.0, 0.2, 0.3])
    assert probs.sum(axis=1) == pytest.approx([1.0, 1.0])

"""The decision rule of per-label thresholds and the checks of the values of
both components' thresholds (the components' use of them:
tests/pipeline/test_sampled_spancat.py, tests/pipeline/test_two_task_ner.py)."""
import numpy
import pytest

from spacy_imbalance.decisions.thresholds import (
    ARGMAX,
    check_label_thresholds,
    check_threshold_labels,
    check_threshold_pair,
    predicted,
    threshold_vector,
)


def test_a_label_without_a_threshold_keeps_the_argmax_rule():
    vector = threshold_vector(["O", "LOC", "PER"], {"PER": 0.25})
    assert vector.dtype == numpy.float32 and vector.tolist() == [ARGMAX, ARGMAX, 0.25]
    labels = numpy.asarray([1, 1, 2, 2])
    confidence = numpy.asarray([0.4, 0.6, 0.25, 0.2], dtype="float32")
    is_argmax = numpy.asarray([False, True, False, True])
    # LOC by the argmax rule, PER at p >= 0.25 whether or not it beats O
    assert predicted(numpy, vector[labels], confidence, is_argmax).tolist() == [False, True, True, False]


def test_threshold_values_are_checked_and_read_back_exactly():
    assert check_label_thresholds(None, "x") is None and check_label_thresholds({}, "x") is None
    assert check_label_thresholds({"PER": 0.30000000000000004, "LOC": 1e-3}, "x") == {"LOC": 0.001, "PER": 0.3}
    with pytest.raises(ValueError, match=r"x: thresholds must be a dict of label -> threshold in \(0, 1\), or null; got 0.5"):
        check_label_thresholds(0.5, "x")
    for value in (0, 1, True, "0.5", float("nan")):
        with pytest.raises(ValueError, match=r"x: thresholds\['LOC'\] is a decision threshold on the label's probability"):
            check_label_thresholds({"LOC": value}, "x")


def test_thresholds_for_unknown_labels_are_named():
    check_threshold_labels({"LOC": 0.5}, ["LOC", "PER"], "x")
    check_threshold_labels(None, [], "x")
    with pytest.raises(ValueError, match="x: thresholds has label 'ORG' that the component does not know; its labels: LOC"):
        check_threshold_labels({"ORG": 0.5}, ["LOC"], "x")
    with pytest.raises(ValueError, match=r"thresholds has labels 'GPE', 'ORG' .* its labels: \(none yet\)"):
        check_threshold_labels({"ORG": 0.5, "GPE": 0.5}, [], "x")


def test_two_task_threshold_pair_is_checked_apart_from_label_thresholds():
    check_threshold_pair(None, 0.3, "x")  # None: fitted during training
    check_threshold_pair(0.5, None, "x")
    for value in (0, 1.0, True, "0.5", float("nan")):
        with pytest.raises(ValueError, match=r"x: be_threshold is a decision threshold on a sigmoid score, in \(0, 1\), or null"):
            check_threshold_pair(0.5, value, "x")
    with pytest.raises(ValueError, match=r"x: en_threshold is a decision threshold on a sigmoid score"):
        check_threshold_pair(-0.1, None, "x")

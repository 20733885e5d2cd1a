"""The decision rule of per-label thresholds and the checks of their values
(the component's use of them: tests/pipeline/test_sampled_spancat.py)."""
import numpy
import pytest

from spacy_imbalance.spans.thresholds.rule import ARGMAX, check_threshold_labels, check_thresholds, predicted, threshold_vector


def test_a_label_without_a_threshold_keeps_the_argmax_rule():
    vector = threshold_vector(["O", "LOC", "PER"], {"PER": 0.25})
    assert vector.dtype == numpy.float32 and vector.tolist() == [ARGMAX, ARGMAX, 0.25]
    labels = numpy.asarray([1, 1, 2, 2])
    confidence = numpy.asarray([0.4, 0.6, 0.25, 0.2], dtype="float32")
    is_argmax = numpy.asarray([False, True, False, True])
    # LOC by the argmax rule, PER at p >= 0.25 whether or not it beats O
    assert predicted(numpy, vector[labels], confidence, is_argmax).tolist() == [False, True, True, False]


def test_threshold_values_are_checked_and_read_back_exactly():
    assert check_thresholds(None, "x") is None and check_thresholds({}, "x") is None
    assert check_thresholds({"PER": 0.30000000000000004, "LOC": 1e-3}, "x") == {"LOC": 0.001, "PER": 0.3}
    with pytest.raises(ValueError, match=r"x: thresholds must be a dict of label -> threshold in \(0, 1\), or null; got 0.5"):
        check_thresholds(0.5, "x")
    for value in (0, 1, True, "0.5", float("nan")):
        with pytest.raises(ValueError, match=r"x: thresholds\['LOC'\] is a decision threshold on the label's probability"):
            check_thresholds({"LOC": value}, "x")


def test_thresholds_for_unknown_labels_are_named():
    check_threshold_labels({"LOC": 0.5}, ["LOC", "PER"], "x")
    check_threshold_labels(None, [], "x")
    with pytest.raises(ValueError, match="x: thresholds has label 'ORG' that the component does not know; its labels: LOC"):
        check_threshold_labels({"ORG": 0.5}, ["LOC"], "x")
    with pytest.raises(ValueError, match=r"thresholds has labels 'GPE', 'ORG' .* its labels: \(none yet\)"):
        check_threshold_labels({"ORG": 0.5, "GPE": 0.5}, [], "x")

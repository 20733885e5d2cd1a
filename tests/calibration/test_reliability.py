"""Reliability tables, expected calibration error and the span populations
of sampled_spancat, on hand-computed examples."""
import sys

import numpy
import pytest

from spacy_imbalance.calibration import (
    ReliabilityBin,
    expected_calibration_error,
    plot_reliability,
    reliability_table,
    span_reliability,
)

from ..spans.scripted import NAME, gold_doc, scripted_nlp

CONFIDENCE = [0.05, 0.15, 0.15, 0.55, 0.65, 0.95, 0.95, 1.0]
CORRECT = [False, True, False, True, False, True, True, True]


def test_reliability_table_on_a_hand_computed_example():
    table = reliability_table(CONFIDENCE, CORRECT, n_bins=10)
    assert [b.count for b in table] == [1, 2, 0, 0, 0, 1, 1, 0, 0, 3]
    assert table[0] == ReliabilityBin(0.0, 0.1, 1, pytest.approx(0.05), 0.0)
    assert table[1] == ReliabilityBin(0.1, 0.2, 2, pytest.approx(0.15), 0.5)
    assert table[2] == ReliabilityBin(0.2, 0.3, 0, None, None)
    # the last bin holds 1.0
    assert table[9] == ReliabilityBin(0.9, 1.0, 3, pytest.approx((0.95 + 0.95 + 1.0) / 3), 1.0)


def test_expected_calibration_error_on_a_hand_computed_example():
    """(1·|0 - .05| + 2·|.5 - .15| + 1·|1 - .55| + 1·|0 - .65| + 3·|1 - .9667|) / 8
    = (.05 + .7 + .45 + .65 + .1) / 8."""
    assert expected_calibration_error(CONFIDENCE, CORRECT, n_bins=10) == pytest.approx(1.95 / 8)
    # two bins: [0, .5) holds .05 .15 .15 (1 right), [.5, 1] the rest (4 of 5 right)
    two = (3 * abs(1 / 3 - 0.35 / 3) + 5 * abs(4 / 5 - 4.1 / 5)) / 8
    assert expected_calibration_error(CONFIDENCE, CORRECT, n_bins=2) == pytest.approx(two)


def test_bin_edges_belong_to_the_bin_above():
    """k/10 goes to bin k, although 0.3 * 10 and 0.7 * 10 round off in floats."""
    edges = [k / 10 for k in range(11)]
    table = reliability_table(edges, [True] * 11, n_bins=10)
    assert [b.count for b in table] == [1] * 9 + [2]
    assert [b.confidence for b in table[:9]] == pytest.approx(edges[:9])


def test_a_calibrated_population_has_no_error():
    confidence = [0.25] * 4 + [0.75] * 4
    correct = [True, False, False, False, True, True, True, False]
    assert expected_calibration_error(confidence, correct, n_bins=4) == pytest.approx(0.0)
    assert expected_calibration_error(numpy.asarray(confidence, dtype="float32"), numpy.asarray(correct), n_bins=4) == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize(
    "confidence,correct,n_bins,message",
    [
        ([0.5], [True, False], 10, "one entry per prediction, got 1 and 2"),
        ([1.5], [True], 10, r"probabilities in \[0, 1\]"),
        ([float("nan")], [True], 10, r"probabilities in \[0, 1\]"),
        ([0.5], [2], 10, "booleans"),
        ([0.5], [True], 0, "n_bins must be an integer >= 1"),
    ],
)
def test_invalid_inputs_are_clear_errors(confidence, correct, n_bins, message):
    with pytest.raises(ValueError, match=message):
        reliability_table(confidence, correct, n_bins=n_bins)


def test_no_predictions():
    assert [b.count for b in reliability_table([], [], n_bins=3)] == [0, 0, 0]
    with pytest.raises(ValueError, match="no predictions"):
        expected_calibration_error([], [])


# (O, LOC, PER). Kate is right; Bob is an entity with the wrong best label;
# "met" is no entity; "Kate met" (PER .56) loses to Kate (.87) in decoding;
# "." (0.01) is below the 0.05 floor
RELIABILITY_TABLE = {
    "Kate met Bob .": {
        (0, 1): (0.08, 0.05, 0.87),
        (1, 2): (0.66, 0.22, 0.12),
        (2, 3): (0.17, 0.48, 0.35),
        (0, 2): (0.40, 0.04, 0.56),
    }
}


def test_span_populations_on_a_hand_computed_example():
    nlp = scripted_nlp(RELIABILITY_TABLE, ["LOC", "PER"])
    gold = gold_doc(nlp, "Kate met Bob .", [(0, 1, "PER"), (2, 3, "PER")])
    populations = span_reliability(nlp, NAME, [gold])
    label, entity = populations["label"], populations["entity"]
    # decoded: Kate, met, Bob (text order)
    assert label.confidence == pytest.approx([0.87, 0.22, 0.48], rel=1e-5)
    assert label.correct.tolist() == [True, False, False]
    assert entity.confidence == pytest.approx([0.92, 0.34, 0.83], rel=1e-5)
    assert entity.correct.tolist() == [True, False, True]
    assert expected_calibration_error(label.confidence, label.correct) == pytest.approx((0.13 + 0.22 + 0.48) / 3, rel=1e-5)
    assert expected_calibration_error(entity.confidence, entity.correct) == pytest.approx((0.08 + 0.34 + 0.17) / 3, rel=1e-5)


def test_plot_reliability_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    populations = {"label": (numpy.asarray(CONFIDENCE), numpy.asarray(CORRECT)), "entity": (numpy.asarray([]), numpy.asarray([], dtype=bool))}
    path = tmp_path / "plots" / "reliability.png"
    plot_reliability(populations, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_reliability_without_matplotlib_is_a_clear_error(tmp_path, monkeypatch):
    for module in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"plot_reliability needs matplotlib: pip install 'spacy-imbalance\[plots\]'"):
        plot_reliability({"label": (numpy.asarray([0.5]), numpy.asarray([True]))}, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()

"""Bootstrap intervals and the paired bootstrap, on counts with known scores."""
import numpy
import srsly
import pytest
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_imbalance.scorers.bootstrap import (
    bootstrap_intervals,
    interval,
    paired_bootstrap,
    paired_bootstrap_runs,
    resample_weights,
    resampled_scores,
)
from spacy_imbalance.scorers.counts import MatchCounts, ents_counts

from .test_scorers import CASES, MACRO, MICRO, _doc


def counts_for(cases, *, perfect=False, repeat=1):
    vocab = Vocab()
    examples = [
        Example(_doc(vocab, gold if perfect else pred), _doc(vocab, gold))
        for _ in range(repeat)
        for gold, pred in cases
    ]
    return ents_counts(examples)


def test_bootstrap_weights_draw_n_per_resample():
    weights = resample_weights(7, 50, seed=3)
    assert weights.shape == (50, 7)
    assert (weights.sum(axis=1) == 7).all()
    assert (resample_weights(7, 50, seed=3) == weights).all()


def test_bootstrap_all_ones_weights_give_the_full_score():
    scores = resampled_scores(counts_for(CASES), numpy.ones((1, len(CASES)), dtype="int64"))
    assert scores["micro_f"][0] == pytest.approx(MICRO[2])
    assert scores["macro_f"][0] == pytest.approx(MACRO[2])


def test_bootstrap_resample_of_one_document():
    # Twice the first document: PER tp 1; LOC fp 1 fn 1; ORG fn 1.
    # micro P = 1/2, R = 1/3, F = 2/(2+1+2); macro F = (1 + 0 + 0) / 3
    weights = numpy.array([[2, 0, 0, 0]])
    scores = resampled_scores(counts_for(CASES), weights)
    assert scores["micro_p"][0] == pytest.approx(1 / 2)
    assert scores["micro_r"][0] == pytest.approx(1 / 3)
    assert scores["micro_f"][0] == pytest.approx(2 / 5)
    assert scores["macro_f"][0] == pytest.approx(1 / 3)


def test_bootstrap_interval_is_percentile():
    low, high = interval(numpy.arange(101, dtype="float64"), level=0.9)
    assert (low, high) == pytest.approx((5.0, 95.0))


def test_bootstrap_interval_contains_observed_score():
    ci = bootstrap_intervals(counts_for(CASES, repeat=10), n_resamples=500, seed=0)
    assert ci["macro_f"][0] <= MACRO[2] <= ci["macro_f"][1]
    assert ci["micro_f"][0] < ci["micro_f"][1]


def test_bootstrap_paired_against_itself_is_zero():
    counts = counts_for(CASES, repeat=5)
    result = paired_bootstrap(counts, counts, n_resamples=200, seed=1)
    for name in ("macro_f", "micro_f"):
        assert result[name]["delta"] == 0 and result[name]["low"] == 0 and result[name]["high"] == 0
        assert result[name]["share_not_better"] == 1.0


def test_bootstrap_paired_detects_a_better_system():
    baseline = counts_for(CASES, repeat=5)
    perfect = counts_for(CASES, perfect=True, repeat=5)
    result = paired_bootstrap(baseline, perfect, n_resamples=500, seed=0)
    # perfect predictions: macro-F1 over PER, LOC, ORG = 1, against the baseline's
    # macro over PER, LOC, ORG and MISC (the perfect system never predicts MISC)
    assert result["macro_f"]["delta"] == pytest.approx(1 - MACRO[2])
    assert result["micro_f"]["delta"] == pytest.approx(1 - MICRO[2])
    assert result["macro_f"]["low"] > 0
    assert result["macro_f"]["share_not_better"] < 0.01
    # and the other way round it is never better
    assert paired_bootstrap(perfect, baseline, n_resamples=200, seed=0)["micro_f"]["share_not_better"] == 1.0


def test_bootstrap_paired_needs_the_same_test_set():
    with pytest.raises(ValueError, match="different test sets"):
        paired_bootstrap(counts_for(CASES), counts_for(CASES, repeat=2))


def test_bootstrap_rejects_empty_test_set():
    with pytest.raises(ValueError, match="no examples"):
        resample_weights(0, 10, seed=0)


def test_bootstrap_paired_runs_average_the_seed_differences():
    baseline = counts_for(CASES, repeat=5)
    perfect = counts_for(CASES, perfect=True, repeat=5)
    # two seeds: one perfect, one equal to the baseline -> mean delta is half the gap
    result = paired_bootstrap_runs([baseline, baseline], [perfect, baseline], n_resamples=300, seed=0)
    single = paired_bootstrap(baseline, perfect, n_resamples=300, seed=0)
    for name in ("macro_f", "micro_f"):
        assert result[name]["delta"] == pytest.approx(single[name]["delta"] / 2)
        # the same resamples: every resampled difference is halved, so are the percentiles
        assert result[name]["low"] == pytest.approx(single[name]["low"] / 2)
        assert result[name]["high"] == pytest.approx(single[name]["high"] / 2)


def test_bootstrap_paired_runs_need_matching_runs():
    counts = counts_for(CASES)
    with pytest.raises(ValueError, match="as many system runs as baseline runs"):
        paired_bootstrap_runs([counts, counts], [counts])
    with pytest.raises(ValueError, match="different test sets"):
        paired_bootstrap_runs([counts], [counts_for(CASES, repeat=2)])


def test_bootstrap_counts_sparse_round_trip():
    counts = counts_for(CASES, repeat=3)
    data = counts.to_sparse()
    assert data["n_rows"] == int(counts.table.any(axis=2).sum())
    back = MatchCounts.from_sparse(srsly.json_loads(srsly.json_dumps(data)))
    assert back.labels == counts.labels
    numpy.testing.assert_array_equal(back.table, counts.table)
    # nothing counted: no rows
    empty = MatchCounts(["A"], numpy.zeros((4, 1, 3), dtype="int64"))
    numpy.testing.assert_array_equal(MatchCounts.from_sparse(empty.to_sparse()).table, empty.table)


def test_bootstrap_counts_read_the_earlier_list_of_rows():
    # metrics written before the compact form: [example, label, tp, fp, fn] rows
    data = {"labels": ["A", "B"], "n_examples": 3, "rows": [[0, 1, 2, 0, 1], [2, 0, 0, 7, 0]]}
    table = MatchCounts.from_sparse(data).table
    assert table[0, 1].tolist() == [2, 0, 1] and table[2, 0].tolist() == [0, 7, 0]
    assert int(table.sum()) == 2 + 1 + 7

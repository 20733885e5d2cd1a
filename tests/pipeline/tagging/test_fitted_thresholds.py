"""Thresholds fitted on held-out score histograms: hand-built histograms,
the counting of task scores, the held-out choice."""
import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.pipeline.tagging.fitted_thresholds import (
    DECAY,
    FALLBACK,
    N_BINS,
    ScoreHistograms,
    after_entity_tokens,
    is_held_out,
)


def histograms(entity_neg=(), entity_pos=(), inside=(), begin=()):
    """Histograms holding one count per listed bin."""
    h = ScoreHistograms.empty()
    for row, bins in ((h.entity[0], entity_neg), (h.entity[1], entity_pos), (h.begin[0], inside), (h.begin[1], begin)):
        for b in bins:
            row[b] += 1
    return h


def test_entity_threshold_maximises_f1_by_hand():
    # positives in bins 30, 60, 80; negatives in bins 10, 20, 50, 70.
    # cut 0.51-0.60 (k = 51..60): TP 2, FP 1 -> F1 = 4 / (3 + 2 + 1) = 0.667
    # cut 0.31-0.50: TP 2, FP 2 -> 4 / 7 = 0.571; cut 0.21-0.30: TP 3, FP 2 -> 6 / 8 = 0.75
    # cut 0.71-0.80: TP 1, FP 0 -> 2 / 4 = 0.5; so the best run is k = 21..30, middle k = 25
    h = histograms(entity_neg=[10, 20, 50, 70], entity_pos=[30, 60, 80])
    en, _ = h.thresholds()
    assert en == pytest.approx(0.25)


def test_separated_scores_take_the_middle_of_the_gap():
    # every cut between bin 20 and bin 80 is perfect: the widest margin is the middle
    h = histograms(entity_neg=[5, 10, 20], entity_pos=[80, 90], inside=[10], begin=[60])
    en, be = h.thresholds()
    assert en == pytest.approx((21 + 80) // 2 / N_BINS)
    assert be == pytest.approx((11 + 60) // 2 / N_BINS)


def test_begin_threshold_makes_fewest_errors_by_hand():
    # inside tokens at bins 40, 70; begin tokens at 30, 80, 90.
    # cuts k = 31..40: errors = begin below (1) + inside at/above (2) = 3
    # k = 41..70: 1 + 1 = 2; k = 71..80: 1 + 0 = 1; k = 81..90: 2 + 0 = 2
    h = histograms(entity_pos=[50], inside=[40, 70], begin=[30, 80, 90])
    _, be = h.thresholds()
    assert be == pytest.approx((71 + 80) // 2 / N_BINS)


def test_no_evidence_falls_back():
    assert ScoreHistograms.empty().thresholds() == (FALLBACK, FALLBACK)


def test_add_counts_the_decoded_score_and_skips_missing_tokens():
    ops = NumpyOps()
    # one_vs_all with 2 types: columns en_1, en_2, be_1, be_2
    h = ops.asarray2f(
        [
            [0.105, 0.305, 0.9, 0.0],  # O token: counted at its highest entity score, bin 30
            [0.805, 0.2, 0.655, 0.1],  # a begin token of type 1: entity bin 80, begin bin 65
            [0.1, 0.705, 0.5, 0.255],  # an inside token of type 2: entity bin 70, inside bin 25
            [0.999, 0.999, 0.999, 0.999],  # missing: not counted
        ]
    )
    tasks = ops.asarray2i([[0, 0, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [-1, -1, -1, -1]])
    hist = ScoreHistograms.empty()
    # the begin token follows O: right whatever its begin score, so not counted
    hist.add(ops, h, tasks, 2, numpy.array([False, False, True, True]))
    assert numpy.flatnonzero(hist.entity[0]).tolist() == [30]
    assert numpy.flatnonzero(hist.entity[1]).tolist() == [70, 80]
    assert hist.begin[1].sum() == 0
    assert numpy.flatnonzero(hist.begin[0]).tolist() == [25]
    assert hist.entity.sum() == 3 and hist.begin.sum() == 1
    # after an entity token it could merge two entities: counted
    again = ScoreHistograms.empty()
    again.add(ops, h, tasks, 2, numpy.array([False, True, True, True]))
    assert numpy.flatnonzero(again.begin[1]).tolist() == [65]
    # the next batch decays what was there
    hist.add(ops, h[:1], tasks[:1], 2, numpy.array([False]))
    assert hist.entity[0, 30] == pytest.approx(DECAY + 1)
    assert hist.entity[1, 80] == pytest.approx(DECAY)


def test_cfg_round_trip():
    h = histograms(entity_neg=[10], entity_pos=[60, 61], inside=[3], begin=[90])
    again = ScoreHistograms.from_cfg(h.to_cfg())
    assert numpy.array_equal(again.entity, h.entity) and numpy.array_equal(again.begin, h.begin)
    assert again.thresholds() == h.thresholds()
    assert ScoreHistograms.from_cfg(None).entity.sum() == 0


def test_held_out_share_is_stable_and_about_right():
    texts = [f"sentence number {i}" for i in range(5000)]
    chosen = [is_held_out(t, 0.1) for t in texts]
    assert 0.08 < sum(chosen) / len(texts) < 0.12
    assert chosen == [is_held_out(t, 0.1) for t in texts]
    assert not any(is_held_out(t, 0.0) for t in texts)
    # a larger share keeps every sentence a smaller one held out
    assert all(is_held_out(t, 0.2) for t, c in zip(texts, chosen) if c)


def test_after_entity_tokens_stays_within_each_doc():
    # two docs, one pair: [E, E, O] and [E, O]; a doc's first token follows nothing
    first = numpy.array([[1, 1], [1, 0], [0, 0]])
    second = numpy.array([[1, 1], [0, 0]])
    assert after_entity_tokens([first, second], 1).tolist() == [False, True, True, False, True]
    assert after_entity_tokens([], 1).tolist() == []

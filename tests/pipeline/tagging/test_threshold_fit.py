"""two_task_ner's side of the threshold fit (``ThresholdFit``): which pair
the decoder uses, which docs are held out, what is counted; and the
targets as a named tuple."""
import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.pipeline.tagging.fitted_thresholds import FALLBACK, ScoreHistograms, ThresholdFit, after_entity_tokens, is_held_out
from spacy_imbalance.pipeline.tagging.two_task import MISSING, TwoTaskTargets, sigmoid

OPS = NumpyOps()


def targets(tasks):
    tasks = numpy.asarray(tasks, dtype="int32").reshape(-1, 2)
    return TwoTaskTargets(tasks, numpy.full(len(tasks), MISSING, dtype="int32"), numpy.zeros(len(tasks), dtype="int32"))


@pytest.mark.parametrize(
    "en,be,fitted,expected",
    [
        (None, None, None, (FALLBACK, FALLBACK)),
        (None, None, [0.3, 0.7], (0.3, 0.7)),
        (0.2, None, [0.3, 0.7], (0.2, 0.7)),
        (0.2, 0.9, [0.3, 0.7], (0.2, 0.9)),
    ],
)
def test_a_fixed_threshold_wins_over_the_fitted_one(en, be, fitted, expected):
    assert ThresholdFit(en, be, 0.1).thresholds(fitted) == expected


def test_docs_are_held_out_only_while_a_threshold_is_fitted():
    texts = [f"sentence number {i}" for i in range(50)]
    assert ThresholdFit(None, 0.5, 0.2).held_out(texts) == [is_held_out(t, 0.2) for t in texts]
    assert any(ThresholdFit(None, 0.5, 0.2).held_out(texts))
    assert ThresholdFit(0.4, 0.5, 0.2).held_out(texts) is None  # both fixed: nothing to fit
    assert ThresholdFit(None, None, 0.0).held_out(texts) is None  # fitted on the training scores


def test_only_held_out_docs_with_tokens_are_counted():
    fit = ThresholdFit(None, None, 0.1)
    scores = [numpy.asarray([[2.0, 1.0], [-1.0, -2.0]], dtype="f"), numpy.zeros((0, 2), dtype="f"), numpy.asarray([[0.5, -0.5]], dtype="f")]
    gold = [targets([1, 1, 0, 0]), targets([]), targets([1, 0])]
    assert fit.count(None, OPS, scores, gold, [False, True, False], 1) is None
    counted = fit.count(None, OPS, scores, gold, [True, True, False], 1)
    expected = ScoreHistograms.empty()
    expected.add(OPS, sigmoid(numpy, scores[0]), gold[0].tasks, 1, after_entity_tokens([gold[0].tasks], 1))
    assert counted == {"score_histograms": expected.to_cfg(), "fitted_thresholds": list(expected.thresholds())}
    # none held out: every doc counts, added to what was stored
    everything = fit.count(counted["score_histograms"], OPS, scores, gold, None, 1)
    expected.add(OPS, sigmoid(numpy, numpy.concatenate([scores[0], scores[2]])), numpy.concatenate([gold[0].tasks, gold[2].tasks]), 1,
                 after_entity_tokens([gold[0].tasks, gold[2].tasks], 1))
    assert everything["score_histograms"] == expected.to_cfg()


def test_held_out_targets_are_all_missing():
    t = targets([1, 0, 0, 0])
    missing = t.all_missing()
    assert isinstance(missing, TwoTaskTargets) and [a.shape for a in missing] == [a.shape for a in t]
    assert all((a == MISSING).all() for a in missing)
    assert missing.tasks.dtype == t.tasks.dtype


def test_sigmoid_never_overflows():
    x = numpy.asarray([-1000.0, 0.0, 1000.0], dtype="f")
    assert sigmoid(numpy, x).tolist() == [0.0, 0.5, 1.0]

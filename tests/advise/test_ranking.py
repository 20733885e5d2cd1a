"""Ranking and the recommendation: a method is recommended over spaCy's
better built-in only when its paired interval lies above 0."""
import numpy
import pytest

from spacy_imbalance.advise import Candidate, rank
from spacy_imbalance.advise.ranking import checkpoint_step, trained
from spacy_imbalance.scorers.counts import MatchCounts

N = 40  # dev sentences, one entity of type X each


def report(found):
    """A dev report whose system finds the entity of the first ``found`` sentences."""
    table = numpy.zeros((N, 1, 3), dtype="int64")
    table[:found, 0, 0] = 1  # TP
    table[found:, 0, 2] = 1  # FN
    counts = MatchCounts(["X"], table)
    f = 2 * found / (found + N)
    return {"macro": {"f": f}, "counts": counts.to_sparse(), "dev_curve": [[0, 0.0], [200, f]]}


CANDIDATES = [Candidate("ner", "ner"), Candidate("spancat_singlelabel", "spancat_singlelabel"),
              Candidate("sampled_spancat_uniform", "sampled_spancat", sampler="uniform")]


def test_rank_recommends_a_method_clearly_better_than_the_best_builtin():
    reports = {"ner": [report(10), report(12)], "spancat_singlelabel": [report(14), report(16)],
               "sampled_spancat_uniform": [report(30), report(32)]}
    advice = rank(CANDIDATES, reports, [0, 1])
    assert advice.baseline == "spancat_singlelabel" and advice.recommended == "sampled_spancat_uniform"
    top = advice.ranking[0]
    # mean F1 difference: seed 0 (60/70 - 28/54), seed 1 (64/72 - 32/56), averaged
    expected = ((60 / 70 - 28 / 54) + (64 / 72 - 32 / 56)) / 2
    assert top.delta["delta"] == pytest.approx(expected) and top.delta["low"] > 0
    assert [r.name for r in advice.ranking] == ["sampled_spancat_uniform", "spancat_singlelabel", "ner"]
    assert advice.ranking[1].delta is None


def test_rank_recommends_the_first_ranked_and_says_when_it_is_not_better():
    reports = {"ner": [report(20), report(20)], "spancat_singlelabel": [report(10), report(10)],
               "sampled_spancat_uniform": [report(21), report(20)]}
    advice = rank(CANDIDATES, reports, [0, 1])
    assert advice.baseline == "ner" and advice.recommended == "sampled_spancat_uniform"
    assert "includes 0" in advice.verdict and "no method is better than `ner` here" in advice.verdict
    # a built-in that ranks first is recommended as such
    reports["ner"] = [report(30), report(30)]
    advice = rank(CANDIDATES, reports, [0, 1])
    assert advice.recommended == "ner" and advice.verdict.startswith("No method is better than spaCy's `ner`")


def test_rank_needs_a_builtin():
    with pytest.raises(ValueError, match="built-in"):
        rank(CANDIDATES[2:], {"sampled_spancat_uniform": [report(1), report(2)]}, [0, 1])


def untrained(found, curve=((0, 0.5),)):
    return {**report(found), "dev_curve": [list(point) for point in curve], "train_seconds": 30.0}


def test_the_scored_checkpoint_is_the_last_evaluation_with_the_best_score():
    assert checkpoint_step({"dev_curve": [[0, 0.1], [200, 0.3], [400, 0.2]]}) == 200
    # spaCy overwrites model-best on a tie
    assert checkpoint_step({"dev_curve": [[0, 0.0], [200, 0.0]]}) == 200
    assert checkpoint_step({"dev_curve": []}) is None
    assert not trained({"dev_curve": [[0, 0.4]]}) and not trained({"dev_curve": [[0, 0.4], [200, 0.3]]})
    assert trained({"dev_curve": [[0, 0.1], [200, 0.3]]})


def test_rank_refuses_to_recommend_when_no_trial_trained():
    # issue 31 M2: every trial scored at step 0, and one still "better than spaCy's"
    reports = {"ner": [untrained(5), untrained(6)], "spancat_singlelabel": [untrained(6), untrained(7)],
               "sampled_spancat_uniform": [untrained(30), untrained(31)]}
    with pytest.raises(ValueError, match="No trial trained past its first update, so nothing is recommended"):
        rank(CANDIDATES, reports, [0, 1])


def test_rank_leaves_out_a_method_with_an_untrained_seed():
    reports = {"ner": [report(10), report(12)], "spancat_singlelabel": [report(14), report(16)],
               "sampled_spancat_uniform": [report(30), untrained(38)]}
    advice = rank(CANDIDATES, reports, [0, 1])
    assert advice.recommended == "spancat_singlelabel"
    assert [r.name for r in advice.ranking] == ["spancat_singlelabel", "ner"]
    assert advice.untrained == [("sampled_spancat_uniform", "no dev evaluation after step 0 (0 steps in 0.5 minutes)")]


def test_rank_refuses_when_the_builtins_did_not_train():
    reports = {"ner": [untrained(10), untrained(12)], "spancat_singlelabel": [untrained(14), report(16)],
               "sampled_spancat_uniform": [report(30), report(32)]}
    with pytest.raises(ValueError, match="built-in components did not train past their first update"):
        rank(CANDIDATES, reports, [0, 1])

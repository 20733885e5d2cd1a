import json

import numpy
import pytest

from spacy_imbalance.audit.estimate import Calibration, FoldSpans, Isotonic, decoding_recall, estimate_miss_rate, label_shift_em, posteriors


def test_isotonic_pools_adjacent_violators_by_hand():
    # (1, 1) then (2, 0) violate: pooled to 0.5 from x = 1; 3 and 4 stay at 1
    g = Isotonic.fit(numpy.array([1.0, 2.0, 3.0, 4.0]), numpy.array([1.0, 0.0, 1.0, 1.0]))
    assert g.values.tolist() == [0.5, 1.0, 1.0]
    assert g(numpy.array([0.0, 1.5, 2.9, 3.5, 9.0])).tolist() == [0.5, 0.5, 0.5, 1.0, 1.0]


def test_isotonic_ties_share_a_value_and_weights_count():
    g = Isotonic.fit(numpy.array([0.2, 0.2, 0.7]), numpy.array([0.0, 1.0, 1.0]), weights=numpy.array([3.0, 1.0, 2.0]))
    # x = 0.2: (3 * 0 + 1 * 1) / 4
    assert g(numpy.array([0.2, 0.7])).tolist() == [0.25, 1.0]
    # a weight of 0 drops the point
    assert Isotonic.fit(numpy.array([0.1, 0.9]), numpy.array([1.0, 0.0]), weights=numpy.array([0.0, 1.0]))(numpy.array([0.1])).tolist() == [0.0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_isotonic_is_monotone_and_keeps_the_total(seed):
    rng = numpy.random.default_rng(seed)
    x = rng.random(500)
    y = (rng.random(500) < x**2).astype(float)
    w = rng.integers(0, 3, 500).astype(float)
    g = Isotonic.fit(x, y, w)
    fitted = g(x)
    assert numpy.all(numpy.diff(fitted[numpy.argsort(x)]) >= 0)
    assert numpy.isclose((fitted * w).sum(), (y * w).sum())


def synthetic_corpus(rate, seed, n_docs=600, per_doc=4, n_dev=400, entity_beta=(5, 2), other_beta=(1, 6)):
    """Each document holds `per_doc` true entities (scores ~ Beta(5, 2), the
    model's) and as many non-entities (Beta(1, 6)); each entity is left
    unannotated with probability `rate`. Labels: 70 % A, 30 % B."""
    rng = numpy.random.default_rng(seed)

    def spans(n):
        entity = numpy.repeat([1.0, 0.0], n)
        scores = numpy.where(entity == 1, rng.beta(*entity_beta, 2 * n), rng.beta(*other_beta, 2 * n))
        return entity, scores

    entity, scores = spans(n_docs * per_doc)
    docs = numpy.tile(numpy.repeat(numpy.arange(n_docs), per_doc), 2)
    label_b = rng.random(len(entity)) < 0.3
    missing = (entity == 1) & (rng.random(len(entity)) < rate)
    annotated_mask = (entity == 1) & ~missing
    annotated = numpy.zeros((n_docs, 2))
    numpy.add.at(annotated, (docs[annotated_mask], label_b[annotated_mask].astype(int)), 1)
    suspects = ~annotated_mask
    # the model's label distribution: right with probability 0.9
    label_probs = numpy.where(label_b[:, None], [[0.1, 0.9]], [[0.9, 0.1]])
    dev_entity, dev_scores = spans(n_dev * per_doc)
    dev_docs = numpy.tile(numpy.repeat(numpy.arange(n_dev), per_doc), 2)
    true_rate = missing.sum() / entity.sum()
    return dict(
        entity=entity, scores=scores, docs=docs, annotated=annotated, annotated_mask=annotated_mask, suspects=suspects,
        label_probs=label_probs, dev=(dev_scores, dev_entity, dev_docs), true_rate=true_rate,
    )


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5])
def test_dev_calibrated_estimate_finds_the_known_rate(rate):
    c = synthetic_corpus(rate, seed=int(rate * 10))
    s = c["suspects"]
    fold = FoldSpans(c["scores"][s], c["label_probs"][s], c["docs"][s], *c["dev"])
    est = estimate_miss_rate([fold], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=200)
    total = est.row("total")
    assert abs(total["rate"] - c["true_rate"]) < 0.03
    assert total["rate_low"] <= c["true_rate"] <= total["rate_high"]
    assert total["expected_missing"] == pytest.approx(sum(est.expected_missing[:2]))


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5])
def test_self_calibrated_estimate_finds_the_known_rate_when_missing_at_random(rate):
    c = synthetic_corpus(rate, seed=10 + int(rate * 10))
    s = c["suspects"]
    # no dev: the calibration spans are the corpus's own, outcome = annotated
    fold = FoldSpans(
        c["scores"][s], c["label_probs"][s], c["docs"][s], c["scores"], c["annotated_mask"].astype(float), c["docs"]
    )
    est = estimate_miss_rate([fold], c["annotated"], ["A", "B"], method="self", n_calibration_docs=0, n_resamples=200)
    assert abs(est.row("total")["rate"] - c["true_rate"]) < 0.04
    assert est.notes and "missing at random" in est.notes[0]
    # per label: B is 30 % of entities, missed at the same rate
    assert abs(est.row("B")["rate"] - c["true_rate"]) < 0.08


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_with_overlapping_scores_dev_stays_right_and_self_overstates(rate):
    # entities ~ Beta(3, 2), non-entities ~ Beta(2, 3): a model that does not separate them
    c = synthetic_corpus(rate, seed=20 + int(rate * 10), entity_beta=(3, 2), other_beta=(2, 3))
    s = c["suspects"]
    dev = FoldSpans(c["scores"][s], c["label_probs"][s], c["docs"][s], *c["dev"])
    on_dev = estimate_miss_rate([dev], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=0)
    # noisier than with separated scores (0.03 above), still near the truth
    assert abs(on_dev.row("total")["rate"] - c["true_rate"]) < 0.06
    own = FoldSpans(c["scores"][s], c["label_probs"][s], c["docs"][s], c["scores"], c["annotated_mask"].astype(float), c["docs"])
    on_self = estimate_miss_rate([own], c["annotated"], ["A", "B"], method="self", n_calibration_docs=0, n_resamples=0)
    # Elkan and Noto's c is too low where the scores overlap: an upper bound, and the note says so
    assert on_self.row("total")["rate"] > c["true_rate"] + 0.1
    assert "overstates" in on_self.notes[0]


def test_label_shift_em_recovers_a_new_prior():
    # calibrated under prior 0.5: g(s) = s, entity scores ~ 2s, others ~ 2(1 - s)
    rng = numpy.random.default_rng(0)
    entity = rng.random(20000) < 0.2
    u = rng.random(20000)
    s = numpy.where(entity, numpy.sqrt(u), 1 - numpy.sqrt(u))
    p = label_shift_em(s, 0.5, numpy.ones_like(s))
    assert p.mean() == pytest.approx(0.2, abs=0.01)
    expected = 0.2 * s / (0.2 * s + 0.8 * (1 - s))
    assert numpy.abs(p - expected).max() < 0.03
    # the same prior: the calibrated probabilities unchanged
    half = numpy.where(rng.random(20000) < 0.5, numpy.sqrt(u), 1 - numpy.sqrt(u))
    assert numpy.abs(label_shift_em(half, 0.5, numpy.ones_like(half)) - half).max() < 0.03


def test_self_posteriors_are_elkan_noto_weights_by_hand():
    g = Isotonic(numpy.array([0.0, 0.5]), numpy.array([0.2, 0.6]))
    # calibration: two annotated spans scored 0.9 and 0.1 -> c = (0.6 + 0.2) / 2
    fold = FoldSpans(
        suspect_scores=numpy.array([0.1, 0.9]),
        suspect_label_probs=numpy.ones((2, 1)),
        suspect_docs=numpy.array([0, 0]),
        calibration_scores=numpy.array([0.9, 0.1, 0.3]),
        calibration_outcomes=numpy.array([1.0, 1.0, 0.0]),
        calibration_docs=numpy.array([0, 0, 0]),
    )
    c = 0.4
    expected = [(1 - c) / c * 0.2 / 0.8, min(1.0, (1 - c) / c * 0.6 / 0.4)]
    assert posteriors(fold, g, "self") == pytest.approx(expected)
    # dev: the prior of the calibration spans is 2/3; the EM lowers both
    dev = posteriors(fold, g, "dev")
    assert numpy.all(dev <= g(fold.suspect_scores) + 1e-12)


def test_unknown_method_is_an_error():
    with pytest.raises(ValueError, match="method must be one of dev, self, got 'guess'"):
        estimate_miss_rate([], numpy.zeros((1, 1)), ["A"], method="guess", n_calibration_docs=1)


def test_calibration_follows_the_dev_set_and_reads_as_its_name():
    assert Calibration.given(None) is Calibration.SELF
    assert Calibration.given([]) is Calibration.DEV  # an empty dev list is still a dev set: check_corpus refuses it
    assert Calibration.of("dev") is Calibration.DEV
    # reports and summary.json keep the plain names
    assert json.dumps({"method": Calibration.SELF}) == '{"method": "self"}'
    assert f"{Calibration.DEV} calibration" == "dev calibration"


def test_decoding_recall_by_hand_and_under_bootstrap_weights():
    # dev doc 0 holds 2 gold entities, one decoded exactly; doc 1 holds 2, both found; doc 2 holds none
    fold = FoldSpans(
        suspect_scores=numpy.array([0.9]),
        suspect_label_probs=numpy.ones((1, 1)),
        suspect_docs=numpy.array([0]),
        calibration_scores=numpy.array([0.9, 0.2, 0.8, 0.7, 0.4]),
        calibration_outcomes=numpy.array([1.0, 0.0, 1.0, 1.0, 0.0]),
        calibration_docs=numpy.array([0, 0, 1, 1, 2]),
        reference_docs=numpy.array([0, 1, 2]),
        reference_entities=numpy.array([2.0, 2.0, 0.0]),
    )
    assert decoding_recall(fold) == pytest.approx(3 / 4)
    # a replicate that draws doc 0 twice and drops doc 1: 2 found of 4
    assert decoding_recall(fold, numpy.array([2.0, 0.0, 1.0])) == pytest.approx(2 / 4)
    # without reference counts every reference entity counts as decoded
    fold.reference_docs = fold.reference_entities = None
    assert decoding_recall(fold) == 1.0


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5])
def test_estimate_counts_the_entities_the_decoding_never_finds(rate):
    """A decoding that finds only 60 % of the entities (of the missing ones and
    of dev's alike): the suspects' sum alone under-counts the missing; divided
    by the recall measured on dev it finds the known rate again."""
    c = synthetic_corpus(rate, seed=20 + int(rate * 10))
    rng = numpy.random.default_rng(int(rate * 100))
    found = (c["entity"] == 0) | (rng.random(len(c["entity"])) < 0.6)
    s = c["suspects"] & found
    dev_scores, dev_entity, dev_docs = c["dev"]
    dev_found = (dev_entity == 0) | (rng.random(len(dev_entity)) < 0.6)
    gold_per_doc = numpy.bincount(dev_docs[dev_entity == 1], minlength=400).astype(float)
    kept = (dev_scores[dev_found], dev_entity[dev_found], dev_docs[dev_found])
    blind = FoldSpans(c["scores"][s], c["label_probs"][s], c["docs"][s], *kept)
    fold = FoldSpans(c["scores"][s], c["label_probs"][s], c["docs"][s], *kept, numpy.arange(400), gold_per_doc)
    truth = c["true_rate"]
    under = estimate_miss_rate([blind], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=0)
    est = estimate_miss_rate([fold], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=200)
    assert under.row("total")["rate"] < truth - 0.03
    assert abs(est.row("total")["rate"] - truth) < 0.03
    assert est.row("total")["rate_low"] <= truth <= est.row("total")["rate_high"]
    assert est.decoding_recall[0] == pytest.approx(0.6, abs=0.03)


def _fold_with_recalls(rate, corpus_recall, dev_recall, seed):
    """A decoding that finds `corpus_recall` of the training corpus's entities
    (annotated and missing alike) and `dev_recall` of dev's, as when dev
    comes from another domain; its held-out recall is measured on the
    annotated entities, as the audit does."""
    c = synthetic_corpus(rate, seed=seed)
    rng = numpy.random.default_rng(seed)
    found = (c["entity"] == 0) | (rng.random(len(c["entity"])) < corpus_recall)
    dev_scores, dev_entity, dev_docs = c["dev"]
    dev_found = (dev_entity == 0) | (rng.random(len(dev_entity)) < dev_recall)
    gold_per_doc = numpy.bincount(dev_docs[dev_entity == 1], minlength=400).astype(float)
    s = c["suspects"] & found
    held_out = float((found & c["annotated_mask"]).sum() / c["annotated_mask"].sum())
    fold = FoldSpans(
        c["scores"][s], c["label_probs"][s], c["docs"][s],
        dev_scores[dev_found], dev_entity[dev_found], dev_docs[dev_found], numpy.arange(400), gold_per_doc,
        held_out_recall=held_out,
    )
    return c, fold, held_out


def test_a_dev_set_the_decoding_finds_less_of_is_named_and_the_held_out_estimate_given():
    c, fold, held_out = _fold_with_recalls(0.3, corpus_recall=0.8, dev_recall=0.5, seed=31)
    est = estimate_miss_rate([fold], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=0)
    truth = c["true_rate"]
    # dividing by dev's recall (0.5) where the corpus's is 0.8 overstates the missing entities by ~1.6x
    assert est.row("total")["rate"] > truth + 0.05
    assert est.held_out_recall == [pytest.approx(held_out)] and held_out == pytest.approx(0.8, abs=0.03)
    assert abs(est.held_out_rate - truth) < 0.03
    assert len(est.notes) == 1 and "another source or domain" in est.notes[0] and f"{100 * est.held_out_rate:.1f} %" in est.notes[0]


def test_no_note_when_dev_and_held_out_recall_agree():
    c, fold, _ = _fold_with_recalls(0.3, corpus_recall=0.6, dev_recall=0.6, seed=32)
    est = estimate_miss_rate([fold], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=0)
    assert est.notes == []
    # the same recall either way: the two estimates agree
    assert est.held_out_rate == pytest.approx(est.row("total")["rate"], abs=0.02)
    # without held-out recalls (the self method, or an older audit) there is neither a check nor a second estimate
    fold.held_out_recall = None
    bare = estimate_miss_rate([fold], c["annotated"], ["A", "B"], method="dev", n_calibration_docs=400, n_resamples=0)
    assert (bare.held_out_recall, bare.held_out_rate, bare.notes) == ([], None, [])

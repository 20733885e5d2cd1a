"""The decoders and the threshold histograms on device arrays: numpy's
results, one copy per batch, and no work that grows with the docs."""
import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.pipeline.tagging.decoding import constrained_viterbi
from spacy_imbalance.pipeline.tagging.fitted_thresholds import ScoreHistograms, after_entity_tokens
from spacy_imbalance.pipeline.tagging.tags import tag_names, transition_masks

TAGS = tag_names(["A", "B"], "BIO")


def log_probs(lengths, seed=0):
    rng = numpy.random.default_rng(seed)
    return [rng.normal(size=(n, len(TAGS))).astype("float32") for n in lengths]


@pytest.mark.parametrize("scheme", ["BIO", "BILUO"])
def test_viterbi_on_device_equals_numpy(device_ops, scheme):
    tags = tag_names(["A", "B"], scheme)
    masks = transition_masks(tags, scheme)
    rng = numpy.random.default_rng(1)
    host = [rng.normal(size=(n, len(tags))).astype("float32") for n in (6, 0, 1, 4)]
    expected = constrained_viterbi(NumpyOps(), host, *masks)
    paths = constrained_viterbi(device_ops, [device_ops.asarray2f(x) for x in host], *masks)
    assert all(type(p) is numpy.ndarray for p in paths)
    assert [p.tolist() for p in paths] == [p.tolist() for p in expected]


@pytest.mark.parametrize("lengths", [[5, 3], [5, 3] * 10, [40, 3]])
def test_viterbi_copies_once_and_caches_its_masks(fake_ops, lengths):
    """One copy of the paths, whatever the docs; the masks go to the device
    once per ops (the second call uploads nothing but the doc lengths), and
    no ``arange`` per token position."""
    masks = transition_masks(TAGS, "BIO")
    scores = [fake_ops.asarray2f(x) for x in log_probs(lengths)]
    constrained_viterbi(fake_ops, scores, *masks)
    with fake_ops.measure() as counts:
        constrained_viterbi(fake_ops, scores, *masks)
    assert (counts.copies, counts.syncs, counts.uploads) == (1, 0, 1)
    assert counts.calls["arange"] <= 1


def test_histograms_on_device_equal_numpy(device_ops):
    rng = numpy.random.default_rng(0)
    h = rng.uniform(size=(12, 2)).astype("float32")
    tasks = rng.integers(-1, 2, size=(12, 2)).astype("int32")
    after = after_entity_tokens([tasks[:5], tasks[5:]], 1)
    expected, got = ScoreHistograms.empty(), ScoreHistograms.empty()
    expected.add(NumpyOps(), h, tasks, 1, after)
    got.add(device_ops, device_ops.asarray2f(h), tasks, 1, after)
    numpy.testing.assert_array_equal(got.entity, expected.entity)
    numpy.testing.assert_array_equal(got.begin, expected.begin)
    assert expected.entity.sum() > 0 and expected.begin.sum() > 0


@pytest.mark.parametrize("n_tokens", [12, 1200])
def test_histograms_copy_the_scores_once(fake_ops, n_tokens):
    rng = numpy.random.default_rng(0)
    h = fake_ops.asarray2f(rng.uniform(size=(n_tokens, 2)).astype("float32"))
    tasks = rng.integers(-1, 2, size=(n_tokens, 2)).astype("int32")
    after = after_entity_tokens([tasks], 1)
    with fake_ops.measure() as counts:
        ScoreHistograms.empty().add(fake_ops, h, tasks, 1, after)
    assert (counts.copies, counts.syncs) == (1, 0)

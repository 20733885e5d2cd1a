"""Negative samplers on device arrays: numpy's samples (same seed, same
stream) on the fake cupy, valid samples on cupy (its random streams are its
own), and a host round trip count that does not grow with the batch."""
import math
from typing import Callable, Dict

import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates
from spacy_imbalance.spans.gold import UNKNOWN
from spacy_imbalance.spans.negatives import (
    AllNegatives,
    ConstantTemperature,
    NegativeSampler,
    SamplingBatch,
    TopNegatives,
    TopNegativesV2,
    UniformNegatives,
    WeightedNegatives,
    WeightedNegativesV2,
    make_generator,
)

SAMPLERS: Dict[str, Callable[[], NegativeSampler]] = {
    "all": AllNegatives,
    "uniform": lambda: UniformNegatives(0.5),
    "weighted": lambda: WeightedNegatives(0.5, temperature=ConstantTemperature(1.5)),
    "weighted_v2": lambda: WeightedNegativesV2(0.5, temperature=ConstantTemperature(1.5)),
    "top": lambda: TopNegatives(0.3),
    "top_v2": lambda: TopNegativesV2(0.3),
}
PER_SENTENCE = {"uniform", "weighted", "weighted_v2"}


def make_batch(ops, lengths, *, positives=(0, 7), unknown=(3,), seed=0) -> SamplingBatch:
    """A batch on ``ops``' device with float32 model outputs, as the
    component gives them."""
    candidates = enumerate_candidates(ops, lengths, 3)
    n = len(candidates)
    classes = numpy.zeros(n, dtype="int32")
    classes[list(positives)] = 1
    classes[list(unknown)] = UNKNOWN
    rng = numpy.random.default_rng(seed)
    probs = rng.dirichlet([1.0, 1.0, 1.0], size=n).astype("float32")
    vectors = rng.normal(size=(n, 5)).astype("float32")
    return SamplingBatch(
        ops,
        candidates,
        ops.asarray1i(classes),
        probs=ops.asarray2f(probs),
        vectors=ops.asarray2f(vectors),
        hidden=ops.asarray2f(vectors[:, ::-1].copy()),
    )


def check_valid(name: str, batch: SamplingBatch, chosen: numpy.ndarray, lengths) -> None:
    ops = batch.ops
    classes, doc_ids = ops.to_numpy(batch.classes), ops.to_numpy(batch.candidates.doc_ids)
    assert chosen.tolist() == sorted(set(chosen.tolist())), "not sorted, or drawn twice"
    assert (classes[chosen] == 0).all(), "drew a gold span or an unknown one"
    if name in PER_SENTENCE:
        eligible = numpy.bincount(doc_ids[classes == 0], minlength=len(lengths))
        expected = [min(math.ceil(0.5 * n), e) for n, e in zip(lengths, eligible)]
        assert numpy.bincount(doc_ids[chosen], minlength=len(lengths)).tolist() == expected
    elif name == "all":
        assert chosen.tolist() == numpy.flatnonzero(classes == 0).tolist()
    else:
        assert len(chosen) == math.ceil(0.3 * (classes == 0).sum())


@pytest.mark.parametrize("name", SAMPLERS)
def test_sampler_on_device_draws_what_numpy_draws(device_ops, name):
    lengths = [6, 4, 5]
    expected = SAMPLERS[name]().sample(make_batch(NumpyOps(), lengths), make_generator(NumpyOps(), 0))
    batch = make_batch(device_ops, lengths)
    chosen = device_ops.to_numpy(SAMPLERS[name]().sample(batch, make_generator(device_ops, 0)))
    assert chosen.dtype == numpy.int32
    check_valid(name, batch, chosen, lengths)
    random = name in PER_SENTENCE
    if not (random and device_ops.name == "cupy"):  # cupy's streams differ from numpy's
        assert chosen.tolist() == expected.tolist()


def test_top_without_positives_falls_back_on_device(device_ops):
    batch = make_batch(device_ops, [6, 6], positives=())
    chosen = device_ops.to_numpy(TopNegatives(0.3).sample(batch, make_generator(device_ops, 0)))
    check_valid("top", batch, chosen, [6, 6])


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("n_docs", [2, 20])
def test_sampler_round_trips_do_not_grow_with_the_batch(fake_ops, name, n_docs):
    """One sync for the sample's size (it depends on the drawn data), plus,
    for top, one copy of the batch's negative and positive counts; no float64."""
    batch = make_batch(fake_ops, [6] * n_docs)
    generator = make_generator(fake_ops, 0)
    with fake_ops.measure() as counts:
        SAMPLERS[name]().sample(batch, generator)
    expected_copies = 1 if name.startswith("top") else 0
    assert (counts.copies, counts.syncs, counts.loops, counts.float64) == (expected_copies, 1, 0, 0)

"""How often a sampler draws each kind of negative: a deterministic
simulation on one synthetic sentence, to compare the uniform and weighted
samplers (the tests and the docs use it).

The sentence has ``n_tokens`` tokens and every span of width 1..``max_width``
as a negative candidate (no gold span), each with a label distribution of
``n_labels`` entity labels plus O (column 0):

* ``"entity"``: one span the model confidently calls an entity (z_O = 0.02,
  z_1 = 0.90), i.e. a likely unlabeled entity;
* ``"hard"``: ``n_hard`` uncertain spans (z_O = 0.5, z_1 = 0.3): O is still
  the model's argmax, so v = 0, but the entropy is high;
* ``"easy"``: all the others (z_O = 0.98), confidently O.

With the defaults (20 tokens, width 8) there are 132 candidates and
⌈0.7·20⌉ = 14 draws, so a uniform sampler draws each candidate with
probability 14/132 ≈ 0.106.
"""
from typing import Dict, List, Tuple, cast

import numpy
from numpy.typing import ArrayLike
from thinc.api import NumpyOps
from thinc.types import Floats2d

from ..candidates import enumerate_candidates, n_candidates
from ._base import NegativeSampler, SamplingBatch, make_generator

KINDS = ("entity", "hard", "easy")


def _distribution(n_labels: int, z_o: float, z_1: float) -> List[float]:
    rest = (1.0 - z_o - z_1) / (n_labels - 1) if n_labels > 1 else 0.0
    return [z_o, z_1] + [rest] * (n_labels - 1)


def synthetic_sentence(
    n_tokens: int = 20, max_width: int = 8, n_labels: int = 6, n_hard: int = 4
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Label distributions (one row per candidate, column 0 = O) and the kind
    of each candidate: candidate 0 is the entity, 1..n_hard the hard ones."""
    n = n_candidates(n_tokens, max_width)
    if n_labels < 1 or not (0 <= n_hard <= n - 1):
        raise ValueError(f"synthetic_sentence: need n_labels >= 1 and 0 <= n_hard <= {n - 1}, got {n_labels}, {n_hard}")
    easy_entity = 0.02 / n_labels
    probs = numpy.tile(_distribution(n_labels, 0.98, easy_entity), (n, 1))
    probs[1 : n_hard + 1] = _distribution(n_labels, 0.5, 0.3)
    probs[0] = _distribution(n_labels, 0.02, 0.90)
    kinds = numpy.array(["easy"] * n, dtype=object)
    kinds[1 : n_hard + 1] = "hard"
    kinds[0] = "entity"
    return probs.astype("float32"), kinds


def draw_rates(
    sampler: NegativeSampler,
    probs: ArrayLike,
    kinds: ArrayLike,
    n_tokens: int = 20,
    max_width: int = 8,
    n_draws: int = 3000,
    seed: int = 0,
    step: int = 0,
) -> Dict[str, float]:
    """Per kind: the share of ``n_draws`` samples that hold a candidate of
    that kind, averaged over the kind's candidates (an estimate of the
    probability that such a candidate is drawn). Same seed, same numbers."""
    ops = NumpyOps()
    candidates = enumerate_candidates(ops, [n_tokens], max_width)
    distributions = numpy.asarray(probs)
    if distributions.ndim != 2 or distributions.dtype.kind != "f":
        raise ValueError(
            "draw_rates: probs must be a 2-d float array (a distribution per candidate), "
            f"got shape {distributions.shape} of {distributions.dtype}"
        )
    if len(candidates) != len(distributions):
        raise ValueError(f"draw_rates: {len(distributions)} distributions for {len(candidates)} candidates")
    classes = ops.alloc1i(len(candidates))  # zeros: all negatives
    # a 2-d float host array (checked above), which Floats2d describes
    batch = SamplingBatch(ops, candidates, classes, step=step, probs=cast(Floats2d, distributions))
    generator = make_generator(ops, seed)
    counts = numpy.zeros(len(candidates))
    for _ in range(n_draws):
        counts[sampler.sample(batch, generator)] += 1
    kind_of = numpy.asarray(kinds)
    return {kind: float(counts[kind_of == kind].mean() / n_draws) for kind in KINDS if (kind_of == kind).any()}

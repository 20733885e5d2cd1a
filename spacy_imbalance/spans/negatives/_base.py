"""What every negative sampler shares: the batch it samples from, the
per-sentence top-k selection that turns random keys into a sample without
replacement, and the random generator on the ops' device."""
import math
from typing import Any, NamedTuple, Optional, Sequence

import numpy
from thinc.api import Ops
from thinc.types import Array1d, Floats1d, Floats2d, Ints1d

from ..candidates import Candidates
from ..gold import O_CLASS

# rate·n is computed in floating point: 0.7 * 10 is 7.000000000000001, whose
# ceiling would be 8. Anything within EPS of an integer counts as that integer.
EPS = 1e-9


class SamplingBatch(NamedTuple):
    """A training batch seen by a sampler.

    ``classes`` are the candidates' gold classes (``span_gold``): only
    candidates of class O are negatives that may be drawn, so no sampler can
    return a gold span or a span touching tokens without annotation. ``probs``
    (label distributions, column 0 = O), ``vectors`` (span representations,
    the scoring head's input) and ``hidden`` (the scoring head's hidden layer,
    the output layer's input) cover every candidate and are filled only for
    samplers that ask for them (``needs_probs``, ``needs_vectors``,
    ``needs_hidden``), by the model in prediction mode: no dropout.
    """

    ops: Ops
    candidates: Candidates
    classes: Ints1d
    step: int = 0
    probs: Optional[Floats2d] = None
    vectors: Optional[Floats2d] = None
    hidden: Optional[Floats2d] = None

    @property
    def negatives(self) -> Array1d:  # bool per candidate
        return self.classes == O_CLASS

    @property
    def positives(self) -> Array1d:  # bool per candidate
        return self.classes > O_CLASS


class NegativeSampler:
    """Base class of the samplers registered in ``misc``. ``sample`` returns
    the sorted candidate indices of the negatives to train on."""

    name = "negatives"
    needs_probs = False
    needs_vectors = False
    needs_hidden = False

    @property
    def needs_model(self) -> bool:
        """Whether sampling reads the model's outputs (else gold classes suffice)."""
        return self.needs_probs or self.needs_vectors or self.needs_hidden

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        raise NotImplementedError

    def n_per_sentence(self, batch: SamplingBatch) -> Optional[Sequence[int]]:
        """How many negatives each sentence gets (None when the count is per batch)."""
        return None

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({settings})"


def check_rate(value: float, setting: str) -> None:
    # `not (...)` also rejects NaN
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 < value <= 1.0):
        raise ValueError(f"{setting} must be in (0, 1], got {value!r}")


def ceil_count(rate: float, n: int) -> int:
    """⌈rate·n⌉ without floating-point overshoot."""
    return max(0, math.ceil(rate * n - EPS))


def make_generator(ops: Ops, seed: int) -> Any:
    """A random generator on the ops' device (numpy or cupy), so that random
    keys are drawn where the candidates are. cupy's stream for a seed is not
    numpy's: a GPU run samples differently from a CPU run (see the package
    docstring)."""
    random = ops.xp.random
    if hasattr(random, "default_rng"):
        return random.default_rng(seed)
    return random.RandomState(seed)  # older cupy


def uniform_keys(generator: Any, n: int) -> Floats1d:
    """n float32 keys in [0, 1) on the generator's device. float32, not
    numpy's default float64: a GPU draws and sorts it at full speed, and its
    2^24 levels leave ties rare (about n^2 / 2^25 pairs; a tie goes to the
    earlier candidate, as any tie of ``top_k_per_group``)."""
    if hasattr(generator, "random"):
        return generator.random(n, dtype=numpy.float32)
    return generator.random_sample(n, dtype=numpy.float32)  # older cupy's RandomState


def top_k_per_group(ops: Ops, keys: Any, groups: Ints1d, eligible: Any, k: Ints1d) -> Ints1d:
    """Per group g, the ``k[g]`` eligible items with the largest keys (all of
    them when the group has fewer), as sorted indices.

    One sort by (group, eligible first, -key) and a rank within the group:
    no loop over groups, and no count read back from the device but the
    size of the result. With i.i.d. uniform keys this is a uniform sample
    without replacement; with keys = log-weight + Gumbel noise it is a
    sample without replacement proportional to the weights (the Gumbel-top-k
    trick). The sort is stable: equal keys keep the earlier item.
    """
    xp = ops.xp
    n = keys.shape[0]
    if n == 0:
        return ops.alloc1i(0)
    # one dtype for lexsort's rows: group ids and 0/1 are exact in float32
    # up to 2^24, so the keys' float32 stays float32
    rows = [-keys, (~eligible).astype(keys.dtype), groups.astype(keys.dtype)]
    order = xp.lexsort(xp.stack(rows))
    group = groups[order]
    first = xp.searchsorted(group, xp.arange(k.shape[0], dtype=group.dtype))
    rank = xp.arange(n, dtype=group.dtype) - first[group]
    keep = eligible[order] & (rank < k[group])
    # the boolean mask is the one sync: the sample's size depends on the data
    return xp.sort(order[keep]).astype("int32")


def sentence_counts(ops: Ops, batch: SamplingBatch, rate: float) -> Ints1d:
    """⌈rate·n⌉ per sentence of n tokens (the sampler caps it at the
    sentence's negatives)."""
    return ops.asarray1i([ceil_count(rate, n) for n in batch.candidates.doc_lengths])

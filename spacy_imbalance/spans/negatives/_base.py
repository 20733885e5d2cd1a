"""What every negative sampler shares: the batch it samples from, the
per-sentence top-k selection that turns random keys into a sample without
replacement, and the random generator on the ops' device."""
import math
from typing import Any, List, NamedTuple, Optional, Sequence, cast

import numpy
from thinc.api import Ops
from thinc.types import Array1d, Floats1d, Floats2d, Ints1d

from ..candidates import Candidates, touching
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
    # per doc, a key that names its sentence (the same words, the same key)
    # mixed with the run's seed: filled for samplers that draw once per
    # sentence (``needs_doc_keys``)
    doc_keys: Optional[Sequence[int]] = None

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
    # the share of the prior correction applied at prediction (``prior_shift``):
    # 0 for every v1 sampler (and v2 of weighted and top), which keep their
    # released behaviour
    correction = 0.0

    @property
    def needs_doc_keys(self) -> bool:
        """Whether sampling reads the sentences' keys (a draw kept per sentence)."""
        return False

    @property
    def needs_model(self) -> bool:
        """Whether sampling reads the model's outputs (else gold classes suffice)."""
        return self.needs_probs or self.needs_vectors or self.needs_hidden

    def sample(self, batch: SamplingBatch, generator: Any) -> Ints1d:
        raise NotImplementedError

    def n_per_sentence(self, batch: SamplingBatch) -> Optional[Sequence[int]]:
        """How many negatives each sentence gets (None when the count is per batch)."""
        return None

    def draw_shares(self, doc_lengths: Sequence[int], doc_counts: Sequence[int]) -> Optional[List[float]]:
        """Per doc of ``doc_lengths`` tokens and ``doc_counts`` candidates, the
        share of its negative candidates one draw trains on (None: unknown)."""
        return None

    def prior_shift(self, ops: Ops, candidates: Candidates) -> Optional[Floats1d]:
        """What prediction adds to each candidate's O logit to undo the odds
        the sampling taught (None: nothing).

        A negative is trained on with probability s (its sentence's
        ``draw_shares``), a gold span always, so the model learns
        p'(O|x) proportional to s·p(O|x): O's odds against every label
        deflated by s, an entity's inflated by 1/s (about 9x for
        ⌈0.7 n⌉ draws among the ~8 n candidates of width <= 8). Bayes'
        rule undoes it by adding -log s to O's logit; ``correction`` in
        [0, 1] is the share of that log-odds shift applied (1: the
        full-negative model's probabilities, when every entity is
        annotated; less leaves the entity odds partly inflated, which an
        incomplete annotation deflates again)."""
        if not self.correction or not len(candidates):
            return None
        shares = self.draw_shares(candidates.doc_lengths, candidates.doc_counts)
        if shares is None:
            return None
        per_doc = numpy.asarray([-self.correction * math.log(share) for share in shares], dtype="float32")
        per_candidate = numpy.repeat(per_doc, numpy.asarray(candidates.doc_counts, dtype="int64"))
        # a 1-d float32 host array, which Floats1d describes
        return ops.asarray1f(cast(Floats1d, per_candidate))

    def correct(self, ops: Ops, candidates: Candidates, logits: Floats2d) -> None:
        """Add ``prior_shift`` to O's logit (column 0) of every candidate, in
        place: what prediction decides with (the written probabilities,
        thresholds and calibration read it too). Training never sees it."""
        shift = self.prior_shift(ops, candidates)
        if shift is not None:
            logits[:, 0] += shift

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({settings})"


class PerSentenceSampler(NegativeSampler):
    """A sampler that trains on ⌈rate·n⌉ negatives of each sentence of n
    tokens (all of them when it has fewer): those with the largest keys,
    which each subclass draws in its ``sample``."""

    rate: float

    def n_per_sentence(self, batch: SamplingBatch) -> Sequence[int]:
        return [ceil_count(self.rate, n) for n in batch.candidates.doc_lengths]

    def draw_shares(self, doc_lengths: Sequence[int], doc_counts: Sequence[int]) -> Optional[List[float]]:
        """⌈rate·n⌉ draws among a sentence's c candidates: min(k, c) / c of its
        negatives (the few gold spans among the c are left in: a share at most
        a few percent low). A doc without candidates counts as fully drawn."""
        return [min(ceil_count(self.rate, n), c) / c if c else 1.0 for n, c in zip(doc_lengths, doc_counts)]

    def top_per_sentence(self, batch: SamplingBatch, keys: Any) -> Ints1d:
        """The sample: each sentence's ⌈rate·n⌉ negatives with the largest ``keys``."""
        ops = batch.ops
        k = ops.asarray1i(self.n_per_sentence(batch))
        return top_k_per_group(ops, keys, batch.candidates.doc_ids, batch.negatives, k)


def check_sampler(negatives: object, owner: str) -> None:
    """``negatives`` of a component's config is one of these samplers
    (confection does not check what a nested block resolves to)."""
    if not isinstance(negatives, NegativeSampler):
        raise ValueError(
            f"{owner}: negatives must be a sampler from spacy_imbalance.spans.negatives "
            f'(e.g. @misc = "spacy-imbalance.uniform_negatives.v1"), got {type(negatives).__name__}'
        )


def check_rate(value: float, setting: str) -> None:
    # `not (...)` also rejects NaN
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 < value <= 1.0):
        raise ValueError(f"{setting} must be in (0, 1], got {value!r}")


def check_correction(value: float, setting: str) -> float:
    """The share of the prior correction: a number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 <= value <= 1.0):
        raise ValueError(
            f"{setting} must be a number in [0, 1] (the share of the sampling bias undone at prediction: "
            f"0 none, 1 all of it), got {value!r}"
        )
    return float(value)


def sentence_keys(ops: Ops, doc_keys: Sequence[int], doc_counts: Sequence[int]) -> Floats1d:
    """Uniform float32 keys for every candidate, drawn from a generator
    seeded by its sentence's key: a sentence gets the same keys at every
    update, so a sampler that takes the top k draws the same negatives
    every epoch. Built on the host (one generator per doc) and uploaded once."""
    parts = [
        numpy.random.default_rng(int(key) % 2**63).random(int(count), dtype=numpy.float32)
        for key, count in zip(doc_keys, doc_counts)
    ]
    keys = numpy.concatenate(parts) if parts else numpy.zeros((0,), dtype="float32")
    return ops.xp.asarray(keys)


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


def overlapping(batch: SamplingBatch) -> Ints1d:
    """The sorted negatives that share a token with a gold span of the batch
    (sub-spans, super-spans and crossing spans of an annotated entity).

    In flat NER a span overlapping an annotated entity is not itself an
    entity, however incomplete the annotation: an unannotated entity never
    overlaps an annotated one, so these are negatives no missed entity can
    hide in. They are also the ones a uniform draw almost never reaches (a
    two-token name has two sub-spans among a sentence's ~8 n candidates),
    and a model that never sees "martin" of "martin short" as "no entity"
    predicts it (issue 42's dev trials). Coverage comes from a difference
    array over the batch's tokens: +1 where a gold span starts, -1 after it
    ends, summed; then ``touching`` says which candidates reach a covered
    token. No loop over spans, on the ops' device."""
    ops, candidates = batch.ops, batch.candidates
    xp = ops.xp
    if not len(candidates):
        return ops.alloc1i(0)
    n_tokens = int(sum(candidates.doc_lengths))
    positive = batch.positives
    # ends + 1 <= n_tokens: both counts are n_tokens + 1 long
    delta = xp.bincount(candidates.starts[positive], minlength=n_tokens + 1)
    delta = delta - xp.bincount(candidates.ends[positive] + 1, minlength=n_tokens + 1)
    covered = xp.cumsum(delta)[:n_tokens] > 0
    return xp.nonzero(touching(ops, candidates, covered) & batch.negatives)[0].astype("int32")


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

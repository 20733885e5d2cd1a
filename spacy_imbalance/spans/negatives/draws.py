"""What ``sampled_spancat`` draws with while it trains (``NegativeDraws``):
the batch a sampler sees (``sampling_batch``: the update's step, the
sentences' keys, what the model says of every candidate), the run's random
stream and its seed (``run_seed``), the missampling counts
(``Missampling``), and the candidates an update scores (``training_rows``)."""
from typing import Any, List, Optional, Protocol, Sequence

import numpy
from spacy.strings import StringStore
from spacy.tokens import Doc
from thinc.api import Ops
from thinc.types import Floats2d, Ints1d

from ...decisions.softmax import softmax
from ..candidates import Candidates
from ..gold import SpanTargets
from ._base import NegativeSampler, SamplingBatch, make_generator


class CandidateView(Protocol):
    """What the model says of every candidate of the batch, in prediction
    mode, computed when asked (``models.span_scorer.CandidateFeatures``)."""

    def logits(self) -> Floats2d: ...

    def vectors(self) -> Floats2d: ...

    def hidden(self) -> Floats2d: ...


def sampling_batch(
    sampler: NegativeSampler, ops: Ops, candidates: Candidates, classes: Ints1d, view: CandidateView,
    *, step: int, docs: Sequence[Doc], seed: int,
) -> SamplingBatch:
    """The batch ``sampler`` draws from: the gold classes and the step of
    every sampler, and what this sampler asks for besides (its sentences'
    keys, the model's probabilities, span vectors or hidden layer)."""
    batch = SamplingBatch(ops, candidates, classes, step=step)
    if sampler.needs_doc_keys:
        batch = batch._replace(doc_keys=[sentence_key(doc, seed) for doc in docs])
    if sampler.needs_probs and len(candidates):
        batch = batch._replace(probs=softmax(ops.xp, view.logits()))
    if sampler.needs_vectors and len(candidates):
        batch = batch._replace(vectors=view.vectors())
    if sampler.needs_hidden and len(candidates):
        batch = batch._replace(hidden=view.hidden())
    return batch


class NegativeDraws:
    """A training run's draws: the sampler's random stream (``reseed``) and
    the missampling counts since the last read (``missampling``). The run's
    seed, its step and its total counts are the component's, saved with it."""

    def __init__(self) -> None:
        self.generator: Any = None
        self.missampling = Missampling()

    def reseed(self, ops: Ops, seed: Optional[int] = None) -> int:
        """Start the stream on the ops' device from ``seed`` (None: a new
        one, ``run_seed``); returns the seed."""
        if seed is None:
            seed = run_seed()
        self.generator = make_generator(ops, seed)
        return seed

    def draw(
        self, sampler: NegativeSampler, ops: Ops, candidates: Candidates, classes: Ints1d, view: "CandidateView",
        *, step: int, docs: Sequence[Doc], seed: int,
    ) -> Ints1d:
        """The sorted negatives ``sampler`` draws (``sampling_batch``)."""
        batch = sampling_batch(sampler, ops, candidates, classes, view, step=step, docs=docs, seed=seed)
        return sampler.sample(batch, self.generator)


def training_rows(ops: Ops, targets: SpanTargets, negatives: Ints1d) -> Ints1d:
    """The sorted candidates an update trains on: every gold span, the drawn
    ``negatives`` and every known negative (a reviewer's rejection), drawn
    or not (unique: a drawn one is trained once)."""
    xp = ops.xp
    trained = [xp.nonzero(targets.classes > 0)[0].astype("int32"), negatives]
    if targets.known is None:
        return xp.sort(xp.concatenate(trained))
    trained.append(xp.nonzero(targets.known)[0].astype("int32"))
    return xp.unique(xp.concatenate(trained)).astype("int32")


def run_seed() -> int:
    """The seed of a training run's sampling stream, from numpy's global
    state, which spacy train's fix_random_seed([training] seed) set: the
    stream follows the training seed."""
    return int(numpy.random.randint(0, 2**31 - 1))


# spaCy's 64-bit string hash (MurmurHash2 64A, seed 1, of the UTF-8 bytes):
# what spacy.strings.hash_string computes, a Cython function that
# spacy/strings.pyi leaves untyped. A StringStore looks bytes up by that very
# hash, without its symbol table (which gives e.g. "ORTH" a small id) and
# without storing them.
_HASHES = StringStore()


def hash_text(text: str) -> int:
    """``spacy.strings.hash_string(text)``, typed."""
    return _HASHES[text.encode("utf8")]


def sentence_key(doc: Doc, seed: int) -> int:
    """A key of the sentence's words and the run's seed: a sentence keeps
    its draw across epochs (and shuffles), another seed draws anew."""
    return (hash_text("\x1f".join(token.text for token in doc)) ^ (int(seed) * 0x9E3779B97F4A7C15)) % 2**64


class Missampling:
    """How many drawn negatives were masked entities (the missampling rate
    of Li et al. 2022, Eq. 12), counted since the last reset."""

    def __init__(self) -> None:
        self.masked = 0
        self.drawn = 0

    def count(self, masked: Optional[Any], negatives: Ints1d, total: Sequence[int]) -> List[int]:
        """Count one draw where the references carry the masked group
        (``masked``: per candidate, whether it is a masked entity); returns
        ``total`` ([masked, drawn] over a whole run) with the draw added."""
        if masked is None:
            return list(total)
        n_masked, n_drawn = int(masked[negatives].sum()), int(negatives.shape[0])
        self.masked += n_masked
        self.drawn += n_drawn
        return [total[0] + n_masked, total[1] + n_drawn]

    def rate(self, *, reset: bool = False) -> Optional[float]:
        """The share of drawn negatives that were masked entities, None when
        none were counted."""
        masked, drawn = self.masked, self.drawn
        if reset:
            self.masked = self.drawn = 0
        return masked / drawn if drawn else None

"""Missampling rate of a negative sampler on synthetic unlabeled-entity
corpora (Li et al. 2022, Eq. 12 and Fig. 4-5): mask a well-annotated corpus
with probability p, draw negatives as training would, and count the share of
drawn negatives that are masked entities, over the whole corpus.

The rate is per draw. Training draws again every epoch, so what a model
learns of a masked entity is whether it was drawn at least once over the
run: ``reached`` is the share of masked entities drawn in the first epoch,
``reached_over_epochs`` the share drawn at least once in ``epochs`` (the
same draws for a sampler that keeps one draw per sentence).
"""
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.types import Array1d, Ints1d

from ..corpus.masking.masking import check_probability, mask_entities
from ..pipeline.sampled_spancat import SampledSpanCategorizer
from ..spans.negatives import NegativeSampler

MASKED_KEY = "masked"
DocsPreparer = Callable[[List[Doc]], List[Doc]]


class MissamplingResult(NamedTuple):
    p: float
    rates: List[float]  # one per seed: masked drawn / drawn over the corpus
    masked_drawn: List[int]
    drawn: List[int]
    masked: List[int]  # one per seed: the masked entities there were to draw
    # one per seed: shares of the masked candidate spans drawn in epoch 1, and at least once in `epochs`
    reached: List[float] = []
    reached_over_epochs: List[float] = []
    epochs: int = 1

    @property
    def seeds_without_masks(self) -> int:
        """Seeds whose masking left no masked entity (p = 0, or a corpus
        without entities): their rate is 0 by construction, whatever the
        sampler does."""
        return sum(1 for n in self.masked if n == 0)

    @property
    def mean(self) -> float:
        return float(numpy.mean(self.rates))

    @property
    def std(self) -> float:
        return float(numpy.std(self.rates, ddof=1)) if len(self.rates) > 1 else 0.0

    def to_dict(self) -> Dict[str, object]:
        return {
            "p": self.p,
            "mean": self.mean,
            "std": self.std,
            "rates": self.rates,
            "masked_drawn": self.masked_drawn,
            "drawn": self.drawn,
            "masked": self.masked,
            "epochs": self.epochs,
            "reached": self.reached,
            "reached_over_epochs": self.reached_over_epochs,
        }


def predicted_docs(docs: Sequence[Doc], prepare: Optional[DocsPreparer] = None) -> List[Doc]:
    """Unannotated copies of ``docs`` (same words), passed through ``prepare``
    (e.g. the pipeline's upstream tok2vec) when given."""
    predicted = [Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in docs]
    return prepare(predicted) if prepare is not None else predicted


def masked_examples(
    predicted: Sequence[Doc], docs: Sequence[Doc], p: float, seed: int, gold_key: Optional[str]
) -> List[Example]:
    """Examples whose reference is the masked doc (dropped entities in
    doc.spans["masked"]) and whose predicted doc is ``predicted``'s."""
    masked = mask_entities(docs, p, seed=seed, spans_key=gold_key, masked_key=MASKED_KEY)
    return [Example(x, y) for x, y in zip(predicted, masked)]


def measure_missampling(
    pipe: SampledSpanCategorizer,
    sampler: NegativeSampler,
    docs: Sequence[Doc],
    p_values: Iterable[float],
    seeds: Sequence[int],
    *,
    batch_size: int = 64,
    prepare: Optional[DocsPreparer] = None,
    progress: Optional[Callable[[MissamplingResult], None]] = None,
    epochs: int = 1,
) -> List[MissamplingResult]:
    """Missampling rates of ``sampler`` run by ``pipe`` (a ``sampled_spancat``
    component: its model gives the weighted sampler's distributions and
    Top-Neg's span vectors) for each masking probability and seed. Seed s
    masks the corpus with seed s and seeds the sampler's generator with s.
    ``prepare`` annotates the input docs first: a model that listens to an
    upstream tok2vec needs the pipeline's earlier components to have run.
    With ``epochs`` > 1 the corpus is drawn from that many times (the rate
    is the first epoch's) and ``reached_over_epochs`` counts the masked
    entities drawn at least once."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    original, original_key, original_seed = pipe.negatives, pipe.cfg["masked_key"], pipe.cfg.get("sampling_seed")
    results = []
    try:
        pipe.negatives = sampler
        # the masks are written to "masked"; the component must read them
        # there whatever it was trained with (null would count nothing)
        pipe.cfg["masked_key"] = MASKED_KEY
        # masking changes only the references: the inputs (and the upstream
        # components' work on them) are shared by every p and seed
        predicted = predicted_docs(docs, prepare)
        for p in p_values:
            check_probability(p, name="p")
            rates, masked_drawn, drawn, masked, reached, reached_all = [], [], [], [], [], []
            for seed in seeds:
                examples = masked_examples(predicted, docs, p, seed, pipe.cfg["gold_key"])
                masked.append(sum(len(eg.reference.spans[MASKED_KEY]) for eg in examples))
                pipe.reseed(seed)
                n_masked = n_drawn = total = 0
                # per batch: the masked candidates drawn in epoch 1, and in any epoch
                first: List[numpy.ndarray] = []
                ever: List[numpy.ndarray] = []
                for epoch in range(epochs):
                    for b, start in enumerate(range(0, len(examples), batch_size)):
                        _, targets, negatives = pipe.sample_negatives(examples[start : start + batch_size])
                        is_masked, hit = _masked_hits(pipe, targets.masked, negatives)
                        if epoch == 0:
                            n_masked += int(hit.sum())
                            n_drawn += int(negatives.shape[0])
                            total += int(is_masked.sum())
                            first.append(hit)
                            ever.append(hit.copy())
                        else:
                            ever[b] |= hit
                rates.append(n_masked / n_drawn if n_drawn else 0.0)
                masked_drawn.append(n_masked)
                drawn.append(n_drawn)
                # ``total`` counts masked entities that are candidates (not wider than max_span_width)
                reached.append(sum(int(h.sum()) for h in first) / total if total else 0.0)
                reached_all.append(sum(int(h.sum()) for h in ever) / total if total else 0.0)
            result = MissamplingResult(float(p), rates, masked_drawn, drawn, masked, reached, reached_all, epochs)
            results.append(result)
            if progress is not None:
                progress(result)
    finally:
        pipe.negatives = original
        pipe.cfg["masked_key"] = original_key
        pipe.cfg["sampling_seed"] = original_seed
    return results


def _masked_hits(
    pipe: SampledSpanCategorizer, masked: Optional[Array1d], negatives: Ints1d
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(which candidates are masked entities, which of them were drawn), on the host."""
    ops = pipe.model.ops
    if masked is None:
        empty = numpy.zeros((0,), dtype=bool)
        return empty, empty
    is_masked = ops.to_numpy(masked).astype(bool)
    hit = numpy.zeros_like(is_masked)
    hit[ops.to_numpy(negatives)] = True
    return is_masked, hit & is_masked

"""Decision thresholds of ``two_task_ner`` fitted while it trains.

AUC training ranks entity tokens above the rest but does not calibrate the
sigmoid scores, so 0.5 is an arbitrary cut (on WNUT-2017 it gave macro
precision 6.9 against recall 12.0). A component never sees the dev set, so
it sets aside a fixed share of its training sentences (chosen by a hash of the
text: the same sentences in every epoch and every resampled copy), trains on
none of their tokens, and keeps histograms of the scores it gives them:

* the entity task: the scores of gold entity tokens and of gold O tokens
  (pooled over the entity types of ``one_vs_all``, so that a rare type does
  not get a threshold from a handful of tokens);
* the begin task: the scores of gold inside tokens, and of gold begin tokens
  that directly follow an entity token. Only those can be decoded wrongly:
  the decoder reads an inside token after O as a begin (conlleval's rule),
  so a begin token after O is right whatever its begin score, while an
  inside token scored as a begin splits its entity and a begin token after
  an entity scored as inside merges two.

The entity threshold maximises token-level F1 of entity tokens, the begin
threshold makes the fewest of those split/merge errors. Where a range of cuts ties
(well separated scores) the middle of the range is taken, the cut with the
widest margin. The histograms decay by ``DECAY`` per update, so they follow
the model as it learns: about the last 1 / (1 - DECAY) = 50 batches count.

``ThresholdFit`` is the component's side of it: the held-out docs of a batch,
their scores counted, and the pair the decoder uses (a fixed threshold wins
over the fitted one).
"""
import zlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from .two_task import TwoTaskTargets, sigmoid

N_BINS = 100
DECAY = 0.98
# a task whose histograms hold no positive (or no begin/inside pair) yet keeps it
FALLBACK = 0.5


def is_held_out(text: str, share: float) -> bool:
    """Whether a training sentence is set aside for fitting: a stable hash of
    its text (Python's ``hash`` changes between processes)."""
    return share > 0 and zlib.crc32(text.encode("utf8")) % 10_000 < share * 10_000


@dataclass
class ScoreHistograms:
    """Counts of held-out token scores in N_BINS equal bins of [0, 1]."""

    entity: numpy.ndarray  # 2 x N_BINS: O tokens, entity tokens
    begin: numpy.ndarray  # 2 x N_BINS: inside tokens, begin tokens right after an entity token

    @classmethod
    def empty(cls) -> "ScoreHistograms":
        return cls(numpy.zeros((2, N_BINS)), numpy.zeros((2, N_BINS)))

    @classmethod
    def from_cfg(cls, data: Optional[Dict[str, Any]]) -> "ScoreHistograms":
        if not data:
            return cls.empty()
        return cls(numpy.asarray(data["entity"], dtype="float64"), numpy.asarray(data["begin"], dtype="float64"))

    def to_cfg(self) -> Dict[str, Any]:
        # rounded: the cfg is JSON and these are decayed counts
        return {"entity": numpy.round(self.entity, 4).tolist(), "begin": numpy.round(self.begin, 4).tolist()}

    def add(self, ops: Any, h: Any, tasks: Any, n_pairs: int, after_entity: Any) -> None:
        """Decay, then count the scores ``h`` (n_tokens x n_tasks, on the ops'
        device) of the tokens whose targets ``tasks`` are not missing.
        ``after_entity`` (bool per token) marks the tokens whose previous token
        in the same doc is a gold entity token. The counting runs on the host
        (``tasks`` and ``after_entity`` are built there): the scores cross
        once, where binning on the device would wait for it per histogram."""
        h, tasks, after_entity = (ops.to_numpy(x) for x in (h, tasks, after_entity))
        bins = numpy.clip((h * N_BINS).astype("int32"), 0, N_BINS - 1)
        en, be = tasks[:, :n_pairs], tasks[:, n_pairs : 2 * n_pairs]
        en_bins, be_bins = bins[:, :n_pairs], bins[:, n_pairs : 2 * n_pairs]
        # the decoder compares a token's highest entity score (over the types
        # of one_vs_all) with the threshold, so that is the score counted
        top = en_bins.max(axis=1)
        is_o = (en == 0).all(axis=1)
        is_entity = en == 1

        def count(values: numpy.ndarray) -> numpy.ndarray:
            return numpy.bincount(values.ravel(), minlength=N_BINS).astype("float64")

        self.entity *= DECAY
        self.begin *= DECAY
        self.entity[0] += count(top[is_o])
        self.entity[1] += count(top[is_entity.any(axis=1)])
        self.begin[0] += count(be_bins[is_entity & (be == 0)])
        self.begin[1] += count(be_bins[is_entity & (be == 1) & after_entity[:, None]])

    def thresholds(self) -> Tuple[float, float]:
        """(entity threshold, begin threshold) at bin edges k / N_BINS."""
        neg, pos = self.entity
        en = FALLBACK
        if pos.sum() > 0:
            tp, fp = _at_or_above(pos), _at_or_above(neg)
            en = _middle_of_best(2 * tp / (pos.sum() + tp + fp))
        inside, begin = self.begin
        be = FALLBACK
        if inside.sum() + begin.sum() > 0:
            errors = (begin.sum() - _at_or_above(begin)) + _at_or_above(inside)
            be = _middle_of_best(-errors)
        return en, be


@dataclass(frozen=True)
class ThresholdFit:
    """two_task_ner's thresholds: each fixed (a number) or, where None,
    fitted on the held-out share ``holdout`` of the training sentences."""

    en_threshold: Optional[float]
    be_threshold: Optional[float]
    holdout: float

    @property
    def fits(self) -> bool:
        return self.en_threshold is None or self.be_threshold is None

    def thresholds(self, fitted: Optional[Sequence[float]]) -> Tuple[float, float]:
        """The (entity, begin) pair the decoder uses: each fixed one, or the
        ``fitted`` one (``FALLBACK`` before any training)."""
        fitted = fitted or (FALLBACK, FALLBACK)
        en, be = self.en_threshold, self.be_threshold
        return (float(fitted[0]) if en is None else float(en), float(fitted[1]) if be is None else float(be))

    def held_out(self, texts: Sequence[str]) -> Optional[List[bool]]:
        """Per doc, whether it is held out (None: none is, or nothing is fitted)."""
        if not self.fits or self.holdout == 0:
            return None
        return [is_held_out(text, self.holdout) for text in texts]

    def count(
        self, stored: Optional[Dict[str, Any]], ops: Any, task_scores: Sequence[Any], targets: Sequence[TwoTaskTargets],
        held_out: Optional[Sequence[bool]], n_pairs: int,
    ) -> Optional[Dict[str, Any]]:
        """Count the task logits ``task_scores`` of the held-out docs (every
        doc when none is held out) into the ``stored`` histograms and refit:
        the cfg's new ``score_histograms`` and ``fitted_thresholds`` (None:
        no doc to count)."""
        keep = [i for i in range(len(targets)) if held_out is None or held_out[i]]
        keep = [i for i in keep if len(targets[i].tasks)]
        if not keep:
            return None
        h = sigmoid(ops.xp, ops.xp.concatenate([task_scores[i] for i in keep]))
        tasks = numpy.concatenate([targets[i].tasks for i in keep])
        after = after_entity_tokens([targets[i].tasks for i in keep], n_pairs)
        histograms = ScoreHistograms.from_cfg(stored)
        # counted on the host, where the targets are: the scores cross once
        histograms.add(ops, h, tasks, n_pairs, after)
        return {"score_histograms": histograms.to_cfg(), "fitted_thresholds": list(histograms.thresholds())}


def _at_or_above(counts: numpy.ndarray) -> numpy.ndarray:
    """For each cut k = 1 .. N_BINS - 1: the count in bins k and above."""
    return numpy.cumsum(counts[::-1])[::-1][1:]


def _middle_of_best(values: numpy.ndarray) -> float:
    """The cut (k / N_BINS for values[k - 1]) in the middle of the first run
    of best values."""
    best = values.max()
    ties = numpy.flatnonzero(values >= best - 1e-9)
    run_end = ties[0]
    while run_end + 1 < len(values) and values[run_end + 1] >= best - 1e-9:
        run_end += 1
    k = (ties[0] + run_end) // 2 + 1
    return round(k / N_BINS, 6)


def after_entity_tokens(tasks_per_doc: List[numpy.ndarray], n_pairs: int) -> numpy.ndarray:
    """Per token of the concatenated docs: whether the previous token of its
    doc is a gold entity token (of any type)."""
    marks = []
    for tasks in tasks_per_doc:
        entity = (tasks[:, :n_pairs] == 1).any(axis=1)
        marks.append(numpy.concatenate([[False], entity[:-1]]) if len(entity) else numpy.zeros(0, dtype=bool))
    return numpy.concatenate(marks) if marks else numpy.zeros(0, dtype=bool)

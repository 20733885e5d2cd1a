"""Calibrated span probabilities and the miss-rate estimate.

**Calibration.** Each fold's model gives every decoded span a score, its
entity probability 1 - p(O). Trained with sampled negatives on a corpus that
misses entities, that score is not a probability of anything observable; an
isotonic map (pool-adjacent-violators) fitted on decoded spans whose outcome
is known turns it into one. The map is monotone, so the ranking of the
suspects is the model's own, and on the spans it was fitted to, its values
sum to the number of true spans in every block (what the estimate needs).

**The estimate**, with a complete dev set (``method = "dev"``): each fold's
map is fitted on that fold model's decoded dev spans, outcome = the span is a
gold entity (exact boundaries), so g(s) = P(entity | s) at dev's share of
entities among decoded spans. The suspects (decoded spans of the training
corpus that touch no annotated entity) hold far fewer entities than that, so
g overstates their probability; the label-shift EM of Saerens, Latinne and
Decaestecker (2002) re-estimates their share of entities, assuming that
entities and non-entities score as they do on dev, and gives each suspect's
probability of being a missing entity. Their sum counts only the missing
entities the decoding finds with exact boundaries; on dev the same decoding
finds a share R of the gold entities (the folds' *decoding recall*,
typically 0.55-0.7), so the expected number of missing entities is
M = sum / R, split over types by the model's label distribution q_l(span),
and the miss rate is r = M / (A + M) with A the annotated entities.

Without a dev set (``method = "self"``) the only outcomes are the training
annotations themselves. Each fold's map is fitted on its own held-out fold,
decoded without blocking the annotations, outcome = the span is annotated:
g(s) = P(annotated | s). If entities are missing at random, a span is an
entity with probability ((1 - c) / c) g / (1 - g) (Elkan and Noto 2008),
where c = P(annotated | entity) is estimated as the mean of g over the
annotated spans. That estimate equals c only when the model's scores
separate entities from non-entities; where they overlap it is below c, so
the miss rate is *overstated*: without a dev set the estimate is an upper
bound (under missing at random), and a test shows by how much it can be.
The decoding recall R is the share of the fold's annotated entities that its
decoding finds, and divides the sum as above. Annotators who miss some kinds
of entities more than others break the missing-at-random assumption; a dev
set does not need it.

**A check of dev against the training corpus.** With a dev set, each fold
also decodes its held-out training documents without blocking their
annotations; the share of their annotated entities it finds is the
*held-out recall*. Where dev comes from another source than the training
corpus, the decoding finds fewer of dev's entities than of the corpus's
own, R understates the recall on the missing entities and M is too high.
When the dev recall is below 0.9x the held-out recall a note says so and
gives the estimate with the held-out recall instead (a point, no interval).
That one assumes the annotators missed entities at random; where they
missed the hard ones, the decoding finds fewer of those than of the
annotated ones, and it is too low.

**Label scopes.** A document that annotates only some types (its label
scope, ``corpus.scopes``) cannot miss the others: an unannotated entity of
another type there is unknown, not missed. Its suspects keep only the label
probabilities q_l of the types it annotates, so M counts no other type in
it, and its decoded spans whose most probable type is another are left out
of the calibration (their outcome is unknown) and of the suspects
(``audit.run``).

**The interval** is a percentile bootstrap over documents: each replicate
resamples the training documents (and the dev documents, independently),
refits every map and recomputes M and r, so it carries the calibration's
uncertainty as well as the corpus's.
"""
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy


class Calibration(StrEnum):
    """What calibrates the fold models' scores: a completely annotated dev
    set, or, without one, the training annotations themselves (module
    docstring). A StrEnum, so reports and JSON keep the plain "dev"/"self"."""

    DEV = "dev"
    SELF = "self"

    @classmethod
    def given(cls, dev_docs: Optional[Sequence]) -> "Calibration":
        """The calibration an audit with these dev documents (or None) uses."""
        return cls.SELF if dev_docs is None else cls.DEV

    @classmethod
    def of(cls, method: Union[str, "Calibration"]) -> "Calibration":
        try:
            return cls(method)
        except ValueError:
            raise ValueError(f"method must be one of {', '.join(c.value for c in cls)}, got {method!r}") from None


@dataclass
class Isotonic:
    """A non-decreasing step function: ``values[i]`` from ``lower[i]`` on."""

    lower: numpy.ndarray
    values: numpy.ndarray

    @classmethod
    def fit(cls, x: numpy.ndarray, y: numpy.ndarray, weights: Optional[numpy.ndarray] = None) -> "Isotonic":
        """Pool-adjacent-violators: the non-decreasing step function closest to
        ``y`` in weighted squared error. Points of equal x share one value."""
        x = numpy.asarray(x, dtype="float64")
        y = numpy.asarray(y, dtype="float64")
        w = numpy.ones_like(x) if weights is None else numpy.asarray(weights, dtype="float64")
        keep = w > 0
        x, y, w = x[keep], y[keep], w[keep]
        if not len(x):
            return cls(numpy.zeros((1,)), numpy.zeros((1,)))
        order = numpy.argsort(x, kind="stable")
        x, y, w = x[order], y[order], w[order]
        # ties first: one block per distinct x
        starts = numpy.concatenate([[0], numpy.nonzero(numpy.diff(x))[0] + 1])
        sums = numpy.add.reduceat(w * y, starts).tolist()
        counts = numpy.add.reduceat(w, starts).tolist()
        lows = x[starts].tolist()
        block_sum: List[float] = []
        block_w: List[float] = []
        block_low: List[float] = []
        for s, c, low in zip(sums, counts, lows):
            block_sum.append(s)
            block_w.append(c)
            block_low.append(low)
            # merge while the last block's mean falls below the one before it
            while len(block_sum) > 1 and block_sum[-1] * block_w[-2] < block_sum[-2] * block_w[-1]:
                s2, c2 = block_sum.pop(), block_w.pop()
                block_low.pop()
                block_sum[-1] += s2
                block_w[-1] += c2
        values = numpy.asarray(block_sum) / numpy.asarray(block_w)
        return cls(numpy.asarray(block_low), values)

    def __call__(self, x: numpy.ndarray) -> numpy.ndarray:
        index = numpy.searchsorted(self.lower, numpy.asarray(x, dtype="float64"), side="right") - 1
        return self.values[numpy.clip(index, 0, len(self.values) - 1)]


@dataclass
class FoldSpans:
    """What one fold contributes: its suspects and its calibration spans.

    suspect_docs: the training document of each suspect (corpus index).
    calibration_docs: the document of each calibration span (dev index for
        method "dev", corpus index for "self").
    reference_docs, reference_entities: the calibration documents and how
        many reference entities (gold on dev, annotated for "self") each
        holds, found or not: the denominator of the decoding recall. Left
        out, every reference entity is taken to be among the calibration
        spans (recall 1).
    """

    suspect_scores: numpy.ndarray
    suspect_label_probs: numpy.ndarray  # (n_suspects, n_labels)
    suspect_docs: numpy.ndarray
    calibration_scores: numpy.ndarray
    calibration_outcomes: numpy.ndarray
    calibration_docs: numpy.ndarray
    reference_docs: Optional[numpy.ndarray] = None
    reference_entities: Optional[numpy.ndarray] = None
    # method "dev": the share of the fold's own annotated entities (in its held-out documents) that its
    # decoding finds with exact boundaries (the module docstring's check of dev)
    held_out_recall: Optional[float] = None


@dataclass
class MissRate:
    """The estimate, per label and over all labels ("total" last)."""

    method: Calibration
    labels: List[str]
    annotated: List[float]
    expected_missing: List[float]
    missing_interval: List[List[float]]
    rate: List[float]
    rate_interval: List[List[float]]
    n_resamples: int
    level: float
    # per fold: the share of reference entities its decoding finds (exact boundaries)
    decoding_recall: List[float] = field(default_factory=list)
    # method "dev": per fold, the recall on its held-out annotated entities, and the total miss rate
    # with those recalls in place of dev's (module docstring)
    held_out_recall: List[float] = field(default_factory=list)
    held_out_rate: Optional[float] = None
    notes: List[str] = field(default_factory=list)

    def row(self, label: str) -> Dict[str, float]:
        i = self.labels.index(label)
        return {
            "annotated": self.annotated[i],
            "expected_missing": self.expected_missing[i],
            "missing_low": self.missing_interval[i][0],
            "missing_high": self.missing_interval[i][1],
            "rate": self.rate[i],
            "rate_low": self.rate_interval[i][0],
            "rate_high": self.rate_interval[i][1],
        }


TOTAL = "total"


def fit_maps(folds: Sequence[FoldSpans], calibration_weights: Optional[numpy.ndarray] = None) -> List[Isotonic]:
    """One isotonic map per fold; ``calibration_weights`` weigh the documents
    (a bootstrap replicate's counts)."""
    maps = []
    for fold in folds:
        w = None if calibration_weights is None else calibration_weights[fold.calibration_docs]
        maps.append(Isotonic.fit(fold.calibration_scores, fold.calibration_outcomes, w))
    return maps


def posteriors(
    fold: FoldSpans,
    g: Isotonic,
    method: Calibration,
    *,
    calibration_weights: Optional[numpy.ndarray] = None,
    suspect_weights: Optional[numpy.ndarray] = None,
) -> numpy.ndarray:
    """Each suspect's probability of being a missing entity (module
    docstring): the label-shift EM for "dev", Elkan and Noto's weight for
    "self". The weights are per document (a bootstrap replicate's counts)."""
    method = Calibration.of(method)
    if not len(fold.suspect_scores):
        return numpy.zeros((0,), dtype="float64")
    g_suspects = g(fold.suspect_scores)
    w_cal = numpy.ones(len(fold.calibration_scores)) if calibration_weights is None else calibration_weights[fold.calibration_docs]
    if not w_cal.sum():
        return numpy.zeros_like(g_suspects)
    if method is Calibration.DEV:
        w_sus = numpy.ones(len(g_suspects)) if suspect_weights is None else suspect_weights[fold.suspect_docs]
        prior = float((fold.calibration_outcomes * w_cal).sum() / w_cal.sum())
        return label_shift_em(g_suspects, prior, w_sus)
    annotated = fold.calibration_outcomes == 1
    if not (w_cal * annotated).sum():
        return numpy.zeros_like(g_suspects)
    c = float((g(fold.calibration_scores) * w_cal)[annotated].sum() / w_cal[annotated].sum())
    odds = g_suspects / numpy.maximum(1.0 - g_suspects, 1e-12)
    return numpy.minimum((1.0 - c) / max(c, 1e-12) * odds, 1.0)


def label_shift_em(g: numpy.ndarray, prior: float, weights: numpy.ndarray, *, tol: float = 1e-7, max_iter: int = 1000) -> numpy.ndarray:
    """Posteriors of a calibrated classifier (probabilities ``g`` under the
    class prior ``prior``) on a population with an unknown prior (Saerens,
    Latinne and Decaestecker 2002): alternate the posteriors under the
    current prior and the prior as their (weighted) mean."""
    if prior <= 0.0 or prior >= 1.0 or not weights.sum():
        return g.copy()
    pi = prior
    for _ in range(max_iter):
        pos = (pi / prior) * g
        neg = ((1.0 - pi) / (1.0 - prior)) * (1.0 - g)
        p = numpy.divide(pos, pos + neg, out=numpy.zeros_like(g), where=(pos + neg) > 0)
        new = float((p * weights).sum() / weights.sum())
        if abs(new - pi) < tol:
            return p
        pi = new
    return p


def decoding_recall(fold: FoldSpans, calibration_weights: Optional[numpy.ndarray] = None) -> float:
    """The share of the reference entities that the fold's decoding found
    with exact boundaries (module docstring); 1 without reference counts."""
    if fold.reference_docs is None or fold.reference_entities is None:
        return 1.0
    w_ref = numpy.ones(len(fold.reference_docs)) if calibration_weights is None else calibration_weights[fold.reference_docs]
    w_cal = numpy.ones(len(fold.calibration_docs)) if calibration_weights is None else calibration_weights[fold.calibration_docs]
    total = float((fold.reference_entities * w_ref).sum())
    found = float((fold.calibration_outcomes * w_cal).sum())
    # found > 0 and total > 0, else there is nothing to scale (the mass is 0 too)
    return found / total if found > 0 and total > 0 else 1.0


def _missing_mass(
    folds: Sequence[FoldSpans],
    maps: Sequence[Isotonic],
    method: Calibration,
    n_labels: int,
    calibration_weights: Optional[numpy.ndarray] = None,
    doc_weights: Optional[numpy.ndarray] = None,
    recalls: Optional[Sequence[float]] = None,
) -> numpy.ndarray:
    """Sum over suspects of P(missing entity) q_l(span), per label, divided by
    the fold's decoding recall (or by ``recalls``, one per fold)."""
    total = numpy.zeros((n_labels,), dtype="float64")
    for f, (fold, g) in enumerate(zip(folds, maps)):
        if not len(fold.suspect_scores):
            continue
        probs = posteriors(fold, g, method, calibration_weights=calibration_weights, suspect_weights=doc_weights)
        if doc_weights is not None:
            probs = probs * doc_weights[fold.suspect_docs]
        recall = decoding_recall(fold, calibration_weights) if recalls is None else recalls[f]
        total += (probs @ fold.suspect_label_probs) / recall
    return total


# dev recall below this share of the held-out recall: dev likely differs from the training corpus
DEV_RECALL_SHORTFALL = 0.9


def _check_dev(
    folds: Sequence[FoldSpans], maps: Sequence[Isotonic], n_labels: int, annotated: numpy.ndarray, dev_recalls: Sequence[float]
) -> Tuple[List[float], Optional[float], List[str]]:
    """The held-out recalls, the total miss rate with them in place of dev's,
    and a note when dev's recall falls short of them (module docstring)."""
    held_out = [fold.held_out_recall for fold in folds]
    if not held_out or any(r is None for r in held_out):
        return [], None, []
    recalls = [float(r) for r in held_out if r is not None]
    if min(recalls) <= 0:
        # a fold found none of its annotated entities: nothing to divide by
        return recalls, None, []
    rate = float(_rates(_missing_mass(folds, maps, Calibration.DEV, n_labels, recalls=recalls), annotated)["rate"][-1])
    on_dev = float(numpy.mean(dev_recalls))
    on_held_out = float(numpy.mean(recalls))
    notes = []
    if on_dev < DEV_RECALL_SHORTFALL * on_held_out:
        notes.append(
            f"The folds' decoding found {100 * on_dev:.0f} % of the dev entities but {100 * on_held_out:.0f} % of the "
            "annotated entities of their held-out training documents: dev likely comes from another source or domain "
            "than the training corpus, and then the estimate is too high. With the held-out recall instead the miss "
            f"rate is {100 * rate:.1f} %; that one assumes the annotators missed entities at random, and is too low "
            "where they missed the hard ones (spacy_imbalance.audit.estimate)."
        )
    return recalls, rate, notes


def _rates(missing: numpy.ndarray, annotated: numpy.ndarray) -> Dict[str, numpy.ndarray]:
    """Expected missing and miss rate per label plus the total (last)."""
    missing = numpy.append(missing, missing.sum())
    annotated = numpy.append(annotated, annotated.sum())
    found = annotated + missing
    rate = numpy.divide(missing, found, out=numpy.zeros_like(missing), where=found > 0)
    return {"missing": missing, "rate": rate}


def estimate_miss_rate(
    folds: Sequence[FoldSpans],
    annotated: numpy.ndarray,
    labels: Sequence[str],
    *,
    method: Calibration,
    n_calibration_docs: int,
    n_resamples: int = 500,
    level: float = 0.95,
    seed: int = 0,
) -> MissRate:
    """The miss rate per label and in total, with a bootstrap interval.

    annotated: (n_docs, n_labels) annotated entities per training document.
    n_calibration_docs: the dev documents (method "dev"); ignored for "self",
        whose calibration documents are the training documents.
    """
    method = Calibration.of(method)
    annotated = numpy.asarray(annotated, dtype="float64")
    n_docs, n_labels = annotated.shape
    maps = fit_maps(folds)
    point = _rates(_missing_mass(folds, maps, method, n_labels), annotated.sum(axis=0))
    rng = numpy.random.default_rng(seed)
    samples: Dict[str, List[numpy.ndarray]] = {"missing": [], "rate": []}
    for _ in range(n_resamples):
        doc_w = rng.multinomial(n_docs, numpy.full(n_docs, 1.0 / n_docs)).astype("float64")
        if method is Calibration.DEV:
            cal_w = rng.multinomial(n_calibration_docs, numpy.full(n_calibration_docs, 1.0 / n_calibration_docs)).astype("float64")
        else:
            cal_w = doc_w
        mass = _missing_mass(folds, fit_maps(folds, cal_w), method, n_labels, calibration_weights=cal_w, doc_weights=doc_w)
        rates = _rates(mass, doc_w @ annotated)
        for key in samples:
            samples[key].append(rates[key])
    tail = 100 * (1 - level) / 2
    intervals = {
        key: numpy.percentile(numpy.stack(values), [tail, 100 - tail], axis=0).T if values else numpy.stack([point[key], point[key]], axis=1)
        for key, values in samples.items()
    }
    dev_recalls = [decoding_recall(fold) for fold in folds]
    held_out, held_out_rate, notes = _check_dev(folds, maps, n_labels, annotated.sum(axis=0), dev_recalls) if method is Calibration.DEV else ([], None, [])
    if method is Calibration.SELF:
        notes.append(
            "No dev set: the calibration is fitted on the training annotations themselves, and the estimate "
            "assumes that entities are missing at random; where the model's scores of entities and non-entities "
            "overlap it overstates the miss rate (an upper bound; spacy_imbalance.audit.estimate). Give --dev, a "
            "completely annotated sample, to drop both."
        )
    return MissRate(
        method=method,
        labels=[*labels, TOTAL],
        annotated=[float(a) for a in numpy.append(annotated.sum(axis=0), annotated.sum())],
        expected_missing=[float(m) for m in point["missing"]],
        missing_interval=[[float(lo), float(hi)] for lo, hi in intervals["missing"]],
        rate=[float(r) for r in point["rate"]],
        rate_interval=[[float(lo), float(hi)] for lo, hi in intervals["rate"]],
        n_resamples=n_resamples,
        level=level,
        decoding_recall=dev_recalls,
        held_out_recall=held_out,
        held_out_rate=held_out_rate,
        notes=notes,
    )

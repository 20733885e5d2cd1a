"""Reliability of a ``sampled_spancat``'s span probabilities.

A model is calibrated when, of the spans it gives probability 0.8, 80 % are
right. ``reliability_table`` bins predictions by confidence (equal-width
bins over [0, 1]) and compares each bin's mean confidence with its
accuracy; the expected calibration error (ECE, Guo et al. 2017) is the
count-weighted mean gap. Thresholds tuned on dev data repair a
miscalibrated decision; the table shows how far off the probabilities are.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from thinc.types import ArrayXd
from thinc.util import to_numpy

from ..evaluation.components import span_component
from ..evaluation.matching import DevMatcher
from ..evaluation.predictions import predict_spans
from ..plots import save_figure

# candidates below it are too many and too unlikely to read anything from
MIN_CONFIDENCE = 0.05

# what the tables read: lists, or host (numpy) or device arrays
Confidences = Union[Sequence[float], numpy.ndarray, ArrayXd]
Outcomes = Union[Sequence[bool], numpy.ndarray, ArrayXd]


# a dataclass, not a NamedTuple: the field ``count`` would shadow tuple.count
@dataclass(frozen=True)
class ReliabilityBin:
    lower: float
    upper: float
    count: int
    confidence: Optional[float]  # mean confidence; None for an empty bin
    accuracy: Optional[float]  # share correct; None for an empty bin


class Population(NamedTuple):
    """Predictions with a confidence each and whether each was right."""

    confidence: numpy.ndarray  # float64 in [0, 1]
    correct: numpy.ndarray  # bool


def reliability_table(confidence: Confidences, correct: Outcomes, n_bins: int = 10) -> List[ReliabilityBin]:
    """``n_bins`` equal-width bins over [0, 1]: bin k holds confidences in
    [k/n, (k+1)/n), the last one 1.0 too. Host or device arrays, or lists
    (the bins are a handful of numbers: they are counted on the host)."""
    conf, right = _check(confidence, correct, n_bins)
    which = _bin_of(conf, n_bins)
    counts = numpy.bincount(which, minlength=n_bins)
    conf_sums = numpy.bincount(which, weights=conf, minlength=n_bins)
    right_sums = numpy.bincount(which, weights=right.astype("float64"), minlength=n_bins)
    table = []
    for k in range(n_bins):
        n = int(counts[k])
        mean_conf = float(conf_sums[k] / n) if n else None
        accuracy = float(right_sums[k] / n) if n else None
        table.append(ReliabilityBin(k / n_bins, (k + 1) / n_bins, n, mean_conf, accuracy))
    return table


def expected_calibration_error(confidence: Confidences, correct: Outcomes, n_bins: int = 10) -> float:
    """sum_k (n_k / N) |accuracy_k - confidence_k| over the non-empty bins of
    ``reliability_table``: 0 for a calibrated model, at most 1."""
    ece = _ece(reliability_table(confidence, correct, n_bins))
    if ece is None:
        raise ValueError("expected_calibration_error: no predictions to measure calibration on")
    return ece


def _ece(table: List[ReliabilityBin]) -> Optional[float]:
    total = sum(b.count for b in table)
    # an empty bin has neither (and a weight of 0)
    gaps = sum(b.count * abs(b.accuracy - b.confidence) for b in table if b.accuracy is not None and b.confidence is not None)
    return float(gaps / total) if total else None


def span_reliability(
    nlp: Language, component: str, docs: Sequence[Doc], *, batch_size: int = 128
) -> Dict[str, Population]:
    """The dev spans a ``sampled_spancat`` decodes when every candidate whose
    best entity probability p(l) is at least 0.05 counts, kept greedily by
    p(l) without overlap, as two populations:

    * ``"label"``: confidence p(l); correct when (start, end, l) is a gold
      entity;
    * ``"entity"``: confidence 1 - p(O); correct when (start, end) is a gold
      entity of any label.

    Spans in docs without gold annotation, or touching tokens whose
    annotation is missing, are left out (their outcome is unknown)."""
    gold_key = span_component(nlp, component).cfg["gold_key"]
    predictions = predict_spans(nlp, component, docs, floor=MIN_CONFIDENCE, batch_size=batch_size)
    matcher = DevMatcher(predictions, docs, gold_key)
    return reliability_populations(matcher)


def reliability_populations(matcher: DevMatcher) -> Dict[str, Population]:
    """``span_reliability`` on predictions made once (with a floor <= 0.05)."""
    p = matcher.predictions
    if p.floor > MIN_CONFIDENCE:
        raise ValueError(f"the predictions keep candidates down to p = {p.floor:g}; the reliability spans need {MIN_CONFIDENCE}")
    kept = matcher.decode(p.confidence >= numpy.float32(MIN_CONFIDENCE))
    kept = kept[~matcher.ignored[kept]]
    gold = matcher.gold_label[kept]
    return {
        "label": Population(p.confidence[kept].astype("float64"), gold == matcher.label_index[kept]),
        "entity": Population(p.entity_prob[kept].astype("float64"), gold >= 0),
    }


def plot_reliability(populations: Dict[str, Population], path: Union[str, Path], *, n_bins: int = 10) -> None:
    """One column per population (a ``Population`` or any (confidence,
    correct) pair): accuracy per confidence bin against the diagonal of
    perfect calibration (top), and how many spans each bin holds (bottom).
    Needs matplotlib (``pip install spacy-imbalance[plots]``)."""
    try:
        # a Figure of its own, not pyplot: no backend switch, no global state
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError(
            "plot_reliability needs matplotlib: pip install 'spacy-imbalance[plots]' (or leave out the plot)"
        ) from err
    if not populations:
        raise ValueError("plot_reliability: no populations to plot")
    fig = Figure(figsize=(4.5 * len(populations), 6))
    axes = fig.subplots(2, len(populations), squeeze=False, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for column, (name, (confidence, correct)) in enumerate(populations.items()):
        _draw(axes[0, column], axes[1, column], name, reliability_table(confidence, correct, n_bins))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def _draw(top: Any, bottom: Any, name: str, table: List[ReliabilityBin]) -> None:
    width = table[0].upper - table[0].lower
    lowers = [b.lower for b in table]
    filled = [b for b in table if b.count]
    top.bar(lowers, [b.accuracy or 0.0 for b in table], width=width, align="edge", edgecolor="black", label="accuracy")
    top.plot([0, 1], [0, 1], "--", color="grey", label="calibrated")
    # where in its bin the mean confidence lies: the gap ECE measures
    top.plot([b.confidence for b in filled], [b.accuracy for b in filled], "o", color="black", label="mean confidence")
    ece = _ece(table)
    top.set_title(f"{name}: ECE {ece:.3f}" if ece is not None else f"{name}: no spans")
    top.set_ylim(0, 1)
    top.set_ylabel("accuracy")
    top.legend(loc="upper left")
    bottom.bar(lowers, [b.count for b in table], width=width, align="edge", edgecolor="black", color="grey")
    bottom.set_xlim(0, 1)
    bottom.set_xlabel("confidence")
    bottom.set_ylabel("spans")


def _check(confidence: Confidences, correct: Outcomes, n_bins: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1, got {n_bins!r}")
    conf = numpy.asarray(to_numpy(confidence), dtype="float64").reshape(-1)
    right = numpy.asarray(to_numpy(correct)).reshape(-1)
    if conf.shape != right.shape:
        raise ValueError(f"confidence and correct must have one entry per prediction, got {conf.shape[0]} and {right.shape[0]}")
    # `not (...)` also catches NaN
    if conf.size and not ((conf >= 0.0) & (conf <= 1.0)).all():
        raise ValueError("confidence values must be probabilities in [0, 1]")
    if right.size and not numpy.isin(right, (0, 1)).all():
        raise ValueError("correct must hold booleans (or 0/1)")
    return conf, right.astype(bool)


def _bin_of(conf: numpy.ndarray, n_bins: int) -> numpy.ndarray:
    # against the edges k / n_bins themselves: conf * n_bins can round a
    # confidence of exactly k / n_bins into bin k - 1
    edges = numpy.arange(n_bins + 1) / n_bins
    # 1.0 belongs to the last bin, not to an (n+1)-th
    return numpy.minimum(numpy.searchsorted(edges, conf, side="right") - 1, n_bins - 1)

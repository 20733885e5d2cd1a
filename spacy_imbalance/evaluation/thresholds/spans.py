"""Per-label decision thresholds of ``sampled_spancat`` that maximise dev
macro-F1, and setting them into a pipeline.

The argmax rule predicts a label only where it beats O. A model trained on
imbalanced data (or with sampled negatives) gives a rare label
probabilities that are right in rank but too low in value, so it is
under-predicted; a lower threshold on p(label) recovers it. The dev docs are
predicted once; the search then decodes and scores them under each
candidate decision.

The search has two stages. First one threshold shared by every label (one
degree of freedom, little room to fit dev noise); then a coordinate ascent
over the labels, one label's threshold at a time, the others fixed, where a
change must add at least ``min_gain`` dev macro-F1. On the WNUT-2017 vectors
runs (docs/benchmarks/calibration.md) per-label thresholds alone gained ~2
dev points that did not carry over to test, while the shared stage and the
margin kept what carried over.
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc

from ...decisions.thresholds import Thresholds, predicted, threshold_vector
from ...scorers.aggregate import prf
from ..components import span_component
from ..matching import DevMatcher, check_dev_gold
from ..predictions import SpanPredictions, predict_spans
from .grid import check_grid

# dev macro-F1 (0-1) a per-label change must add: half a point
DEFAULT_MIN_GAIN = 0.005


@dataclass
class SpanThresholdSearch:
    """The thresholds the component carried and the best the search found
    (labels left out keep the argmax rule), with dev macro-F1 and per-label
    F1 under each (None: a label with neither gold nor predicted spans, which
    macro-F1 leaves out)."""

    labels: List[str]  # the scored labels: the component's, then other gold labels
    support: Dict[str, int]  # gold spans per label
    current: Thresholds
    best: Thresholds
    current_macro_f: float
    best_macro_f: float
    current_f: Dict[str, Optional[float]]
    best_f: Dict[str, Optional[float]]

    @property
    def improves(self) -> bool:
        """Whether the best thresholds beat the current ones (a tie keeps them)."""
        return self.best_macro_f > self.current_macro_f


def tune_span_thresholds(
    nlp: Language,
    component: str,
    docs: Sequence[Doc],
    *,
    grid: Sequence[float],
    rounds: int = 2,
    shared: bool = True,
    min_gain: float = DEFAULT_MIN_GAIN,
    batch_size: int = 128,
) -> SpanThresholdSearch:
    """The search of ``search_thresholds`` on the gold ``docs``, starting
    from the component's own thresholds (``grid``: e.g. ``default_grid(0.05)``
    from ``evaluation.thresholds.grid``)."""
    grid = check_grid(grid)
    current = span_component(nlp, component).thresholds or {}
    matcher = dev_matcher(nlp, component, docs, floor=search_floor(grid, current), batch_size=batch_size)
    return search_thresholds(matcher, current, grid, rounds=rounds, shared=shared, min_gain=min_gain)


def dev_matcher(nlp: Language, component: str, docs: Sequence[Doc], *, floor: float, batch_size: int = 128) -> DevMatcher:
    """The gold ``docs`` predicted once by ``component`` (candidates down to
    ``floor``, see ``predict_spans``) and matched with their gold."""
    gold_key = span_component(nlp, component).cfg["gold_key"]
    check_dev_gold(docs, gold_key)
    return DevMatcher(predict_spans(nlp, component, docs, floor=floor, batch_size=batch_size), docs, gold_key)


def search_floor(grid: Sequence[float], current: Thresholds) -> float:
    """The lowest probability any decision of the search can predict at."""
    return min([*grid, *current.values()])


def search_thresholds(
    matcher: DevMatcher,
    current: Thresholds,
    grid: Sequence[float],
    *,
    rounds: int = 2,
    shared: bool = True,
    min_gain: float = DEFAULT_MIN_GAIN,
) -> SpanThresholdSearch:
    """The search on predictions made once (module docstring). With
    ``shared``, every grid value as one threshold for all labels first, kept
    when it beats ``current`` strictly. Then for each label, most frequent in
    gold first: "argmax" and every grid value are decoded, and the best is
    kept when it beats the running best by more than ``min_gain`` (0: any
    strict gain; a tie keeps the value the label has). ``rounds`` passes over
    the labels, fewer when a pass changes nothing. The result never scores
    below ``current``."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1 (passes over the labels), got {rounds!r}")
    if not 0.0 <= min_gain < 1.0:
        raise ValueError(f"min_gain must be in [0, 1) (dev macro-F1 a per-label change must add), got {min_gain!r}")
    predictions = matcher.predictions
    if predictions.floor > search_floor(grid, current):
        # a decision could predict candidates the predictions left out
        raise ValueError(
            f"the predictions keep candidates down to p = {predictions.floor:g}, above the lowest threshold "
            f"to search ({search_floor(grid, current):g}); predict with floor=search_floor(grid, current)"
        )
    support = dict(zip(matcher.labels, (int(n) for n in matcher.gold_totals)))
    tunable = list(predictions.classes[1:])
    order = sorted(tunable, key=lambda label: (-support[label], label))
    best = dict(current)
    best_totals = _totals(matcher, best)
    best_f = _macro_f(best_totals)
    current_totals, current_f = best_totals, best_f
    if shared:
        for value in grid:
            trial = {label: value for label in tunable}
            totals = _totals(matcher, trial)
            score = _macro_f(totals)
            if score > best_f:
                best, best_totals, best_f = trial, totals, score
    for _ in range(rounds):
        changed = False
        for label in order:
            kept = best.get(label)
            # the label's best value (the first of equals), then the margin
            top: Optional[Tuple[float, Thresholds, numpy.ndarray]] = None
            for option in [None, *grid]:  # None: argmax
                if option == kept:
                    continue
                trial = _with(best, label, option)
                totals = _totals(matcher, trial)
                score = _macro_f(totals)
                if top is None or score > top[0]:
                    top = (score, trial, totals)
            if top is not None and top[0] > best_f + min_gain:
                best_f, best, best_totals = top
                changed = True
        if not changed:
            break
    return SpanThresholdSearch(
        labels=list(matcher.labels),
        support=support,
        current=dict(current),
        best=best,
        current_macro_f=current_f,
        best_macro_f=best_f,
        current_f=_per_label_f(matcher.labels, current_totals),
        best_f=_per_label_f(matcher.labels, best_totals),
    )


def score_thresholds(matcher: DevMatcher, thresholds: Thresholds) -> Tuple[float, Dict[str, Optional[float]]]:
    """Dev macro-F1 and per-label F1 of the component deciding with
    ``thresholds``: the ``ents_macro_f`` and ``ents_per_type`` F that
    ``nlp.evaluate`` would report for these docs."""
    totals = _totals(matcher, thresholds)
    return _macro_f(totals), _per_label_f(matcher.labels, totals)


def decide(predictions: SpanPredictions, thresholds: Thresholds) -> numpy.ndarray:
    """Which candidates the component predicts with ``thresholds`` (its rule,
    on the host): p(l) >= thresholds[l] in float32, or the argmax rule for a
    label without one."""
    vector = threshold_vector(predictions.classes, thresholds)[predictions.labels]
    return predicted(numpy, vector, predictions.confidence, predictions.is_argmax)


def set_span_thresholds(nlp: Language, component_name: str, thresholds: Optional[Thresholds]) -> None:
    """Give the ``sampled_spancat`` component ``component_name`` new decision
    thresholds (None: the argmax rule), in its ``cfg`` and in the pipeline
    config: ``nlp.to_disk`` writes config.cfg from the latter, and a pipeline
    assembled or trained on from that config.cfg would otherwise get the old
    thresholds back."""
    pipe = span_component(nlp, component_name)
    pipe.set_thresholds(thresholds)
    # nlp.config is rebuilt from these per-component configs on every access
    nlp.get_pipe_config(component_name)["thresholds"] = pipe.thresholds


def _with(thresholds: Thresholds, label: str, value: Optional[float]) -> Thresholds:
    trial = {k: v for k, v in thresholds.items() if k != label}
    if value is not None:
        trial[label] = value
    return dict(sorted(trial.items()))


def _totals(matcher: DevMatcher, thresholds: Thresholds) -> numpy.ndarray:
    return matcher.totals(matcher.decode(decide(matcher.predictions, thresholds)))


def _macro_f(totals: numpy.ndarray) -> float:
    return float(prf(totals)["macro_f"])


def _per_label_f(labels: Sequence[str], totals: numpy.ndarray) -> Dict[str, Optional[float]]:
    scores = prf(totals)
    return {label: float(scores["f"][i]) if scores["present"][i] else None for i, label in enumerate(labels)}

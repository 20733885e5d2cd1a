"""The decision rule of thresholds and the checks of their values, for both
components that decide with them. The thresholds' two other homes: the fit
during training (``pipeline/tagging/fitted_thresholds``) and the search on
dev data (``evaluation/thresholds/``).

sampled_spancat's per-label thresholds: for each candidate, l is its most
probable entity label and p(l) its probability (``spans.scoring.best_entity``).
Without a threshold for l the argmax rule decides: l is predicted when it
beats O. With one, l is predicted when p(l) >= thresholds[l], even where O
is more probable. The component applies the rule on the device when it
annotates; the threshold search applies the same rule on the host to
predictions made once (``predicted``).

two_task_ner's threshold pair: an entity and a begin threshold on sigmoid
scores (Algorithm 1, ``pipeline.tagging.two_task.decide``), each fixed in
(0, 1) or None, fitted during training.
"""
import numbers
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy

# sampled_spancat: label -> threshold on p(label)
Thresholds = Dict[str, float]
# two_task_ner: (entity threshold, begin threshold)
ThresholdPair = Tuple[float, float]
# a label's threshold meaning "keep the argmax rule": above every probability
ARGMAX = 2.0


def predicted(xp: Any, threshold: Any, confidence: Any, is_argmax: Any) -> Any:
    """Per candidate, whether its label l is predicted: ``threshold`` is
    thresholds[l] per candidate (``ARGMAX`` for the argmax rule), float32 as
    ``confidence`` (p(l)), so the comparison is the component's on either
    side; ``xp`` is NumPy on the host, the ops' module on the device."""
    return xp.where(threshold > 1.0, is_argmax, confidence >= threshold)


def threshold_vector(classes: Sequence[str], thresholds: Thresholds) -> numpy.ndarray:
    """Per output column (O first, never used): the label's threshold, or
    ``ARGMAX`` (above any probability) for a label that keeps the argmax rule.
    float32, as the probabilities it is compared with."""
    return numpy.asarray([thresholds.get(label, ARGMAX) for label in classes], dtype="float32")


def check_label_thresholds(thresholds: Optional[Thresholds], prefix: str) -> Optional[Thresholds]:
    """sampled_spancat's thresholds as {label: float} in label order, or None
    for none (an empty dict decides as None does). Each must be in (0, 1): at
    0 every candidate would be an entity, and p(l) never exceeds 1."""
    if thresholds is None:
        return None
    if not isinstance(thresholds, dict):
        raise ValueError(f"{prefix}: thresholds must be a dict of label -> threshold in (0, 1), or null; got {thresholds!r}")
    if not thresholds:
        return None
    checked: Thresholds = {}
    for label, value in sorted(thresholds.items()):
        # srsly's JSON reader (the component's cfg file) reads 0.3 back as
        # 0.30000000000000004: 12 decimals undo that, and float32
        # probabilities cannot tell the two apart anyway
        number = round(float(value), 12) if isinstance(value, numbers.Real) and not isinstance(value, bool) else None
        # `not 0 < number < 1` also refuses NaN
        if number is None or not 0.0 < number < 1.0:
            raise ValueError(
                f"{prefix}: thresholds[{label!r}] is a decision threshold on the label's probability, "
                f"in (0, 1); got {value!r}"
            )
        checked[str(label)] = number
    return checked


def check_threshold_labels(thresholds: Optional[Thresholds], labels: Sequence[str], prefix: str) -> None:
    """A threshold for a label the component does not predict is a typo or
    a pipeline mix-up, never something to ignore."""
    unknown = sorted(set(thresholds or ()) - set(labels))
    if unknown:
        raise ValueError(
            f"{prefix}: thresholds has {'labels' if len(unknown) > 1 else 'label'} "
            f"{', '.join(map(repr, unknown))} that the component does not know; its labels: "
            f"{', '.join(labels) if labels else '(none yet)'}"
        )


def check_threshold_pair(en_threshold: Optional[float], be_threshold: Optional[float], prefix: str) -> None:
    """two_task_ner's entity and begin thresholds: each a number in (0, 1),
    or None (fitted during training)."""
    for setting, value in (("en_threshold", en_threshold), ("be_threshold", be_threshold)):
        if value is None:  # fitted during training
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
            raise ValueError(
                f"{prefix}: {setting} is a decision threshold on a sigmoid score, in (0, 1), or null to fit it "
                f"on held-out training sentences; got {value!r}"
            )

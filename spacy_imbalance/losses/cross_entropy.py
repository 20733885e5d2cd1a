"""Softmax cross-entropy, plain and class-weighted (WCE-1 / WCE-2 of the MoM paper)."""
import math
from typing import List, Literal, Optional, Sequence, Tuple, get_args

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d, Ints1d

from ..decisions.softmax import SoftmaxParts
from .base import TokenwiseLoss, check_setting, p_minus_one_hot

__all__ = [
    "CrossEntropy",
    "WeightedCrossEntropy",
    "WeightScheme",
    "class_weights",
    "configure_cross_entropy_v1",
    "configure_weighted_cross_entropy_v1",
]

WeightScheme = Literal["inverse_frequency", "log"]
WEIGHT_SCHEMES: Tuple[str, ...] = get_args(WeightScheme)


class CrossEntropy(TokenwiseLoss):
    """Softmax cross-entropy: per token -log p_c, gradient p - onehot(c).

    normalize (bool): Divide by the number of non-missing tokens (True) or sum (False).
    """

    def token_terms(self, parts: SoftmaxParts, gold: Ints1d) -> Tuple[Floats1d, Floats2d]:
        xp = get_array_module(parts.p)
        log_p_gold = parts.log_p[xp.arange(gold.shape[0]), gold]
        return -log_p_gold, p_minus_one_hot(parts, gold)


class WeightedCrossEntropy(TokenwiseLoss):
    """Class-weighted cross-entropy: per token -w_c log p_c, with weights from
    the training class counts given to ``initialize``.

    scheme (str): "inverse_frequency" (WCE-1): w_k = s / (K s_k), the inverse
        class frequency scaled so the mean weight over training tokens is 1
        (scikit-learn's "balanced"). "log" (WCE-2, Li et al. 2020, used in the
        MoM paper): w_k = log10((s - s_k) / s_k + beta). s is the total count,
        s_k the count of class k and K the number of classes.
    beta (float): The offset of the "log" scheme; at least 1 so weights are >= 0.
    normalize (bool): Divide by the number of non-missing tokens (True) or sum
        (False). The weights rescale per-token losses; the mean is over
        tokens, not over weights.
    """

    def __init__(
        self, *, scheme: WeightScheme = "inverse_frequency", beta: float = 1.0, normalize: bool = True
    ) -> None:
        super().__init__(normalize=normalize)
        if scheme not in WEIGHT_SCHEMES:
            raise ValueError(f"Unknown weighting scheme {scheme!r}: scheme must be one of {list(WEIGHT_SCHEMES)}")
        check_setting("beta", beta, low=1, note=" (so that every weight log10((s - s_k)/s_k + beta) is >= 0)")
        self.scheme = scheme
        self.beta = beta
        self._class_counts: Optional[List[int]] = None
        self.weights: Optional[List[float]] = None

    @property
    def needs_class_counts(self) -> bool:
        return True

    @property
    def class_counts(self) -> Optional[List[int]]:
        return None if self._class_counts is None else list(self._class_counts)

    def initialize(self, class_counts: Sequence[int]) -> None:
        """Set the class weights from the gold-class counts of the training
        data, indexed by class id."""
        counts = [int(count) for count in class_counts]
        self.weights = class_weights(counts, scheme=self.scheme, beta=self.beta)
        self._class_counts = counts

    def token_terms(self, parts: SoftmaxParts, gold: Ints1d) -> Tuple[Floats1d, Floats2d]:
        if self.weights is None:
            raise RuntimeError(
                "WeightedCrossEntropy needs class counts from the training data to set its "
                "weights: call initialize(class_counts) first (the token_ner component does "
                "this in its initialize)"
            )
        n_classes = parts.p.shape[1]
        if len(self.weights) != n_classes:
            raise ValueError(
                f"WeightedCrossEntropy was initialized with {len(self.weights)} class counts "
                f"but the logits have {n_classes} classes"
            )
        xp = get_array_module(parts.p)
        # The weights are K Python floats: one small transfer per call.
        token_weights = xp.asarray(self.weights, dtype=parts.p.dtype)[gold]
        log_p_gold = parts.log_p[xp.arange(gold.shape[0]), gold]
        d_logits = token_weights[:, None] * p_minus_one_hot(parts, gold)
        return -token_weights * log_p_gold, d_logits


def class_weights(class_counts: Sequence[int], *, scheme: WeightScheme, beta: float = 1.0) -> List[float]:
    """Per-class weights from gold-class counts (see ``WeightedCrossEntropy``).

    A class with count 0 never occurs as gold in the training data, so its
    weight only matters if it shows up later (a new label, or a count taken
    on a subset). Both formulas divide by s_k, so such a class gets the
    weight of a class seen once: the largest weight, which is finite.
    """
    if not class_counts:
        raise ValueError("class_counts is empty: need one count per class")
    if any(count < 0 for count in class_counts):
        raise ValueError(f"class_counts must be >= 0, got {list(class_counts)}")
    total = sum(class_counts)
    if total == 0:
        raise ValueError(
            "class_counts are all zero: the training data has no gold tokens to weight the classes by"
        )
    n_classes = len(class_counts)
    counts = [max(count, 1) for count in class_counts]
    if scheme == "inverse_frequency":
        return [total / (n_classes * count) for count in counts]
    if scheme == "log":
        return [math.log10((total - count) / count + beta) for count in counts]
    raise ValueError(f"Unknown weighting scheme {scheme!r}: scheme must be one of {list(WEIGHT_SCHEMES)}")


@registry.losses("spacy-imbalance.CrossEntropy.v1")
def configure_cross_entropy_v1(*, normalize: bool = True) -> CrossEntropy:
    return CrossEntropy(normalize=normalize)


@registry.losses("spacy-imbalance.CrossEntropy.v2")
def configure_cross_entropy_v2(*, normalize: bool = False) -> CrossEntropy:
    """v1 summed by default (``normalize = false``): sampled_spancat's default
    loss, the v2 head's (docs/benchmarks/never_worse.md). A name of its own
    so that a v1 block leaving ``normalize`` out keeps v1's mean."""
    return CrossEntropy(normalize=normalize)


@registry.losses("spacy-imbalance.WeightedCrossEntropy.v1")
def configure_weighted_cross_entropy_v1(
    *, scheme: WeightScheme = "inverse_frequency", beta: float = 1.0, normalize: bool = True
) -> WeightedCrossEntropy:
    return WeightedCrossEntropy(scheme=scheme, beta=beta, normalize=normalize)

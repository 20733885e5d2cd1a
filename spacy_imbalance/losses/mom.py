"""Majority-or-minority (MoM) learning (MoM paper, Sec. 2.2, Eq. 1-3).

Two versions differ only in how the O-only term L_MoM is normalised:

* ``MoMLoss.v1`` divides it by the normalizer of the base loss (by default the
  batch's non-missing token count), so L_MoM weighs like L.
* ``MoMLoss.v2`` follows Eq. 1 and 3 as printed: per sentence the O-only sum is
  divided by M, the length every sentence is padded to (the longest sentence of
  the dataset, 128 tokens in the paper's BERT setup), and Eq. 3 averages over
  the N sentences of the batch. A batch's L_MoM is therefore the O-only sum
  over N·M, against the base loss's token mean: on tweets (about 18 tokens)
  and M = 128 the O term weighs about 7x less than under v1, which is why the
  paper's lambda values (0.125-0.357) would be about 0.6 under v1.
"""
from typing import List, Optional, Sequence, Tuple, cast

import numpy
from thinc.api import get_array_module, registry
from thinc.types import Floats2d, Ints1d

from .base import DeviceLoss, GoldIds, TokenLoss, check_gold_ids, check_setting
from .cross_entropy import CrossEntropy

__all__ = ["MoMLoss", "MoMLossV2", "configure_mom_loss_v1", "configure_mom_loss_v2"]


class MoMLoss(TokenLoss):
    """L = lambda_ * L_base + (1 - lambda_) * L_MoM, where L_MoM is the base
    loss over the tokens whose gold class is the majority class O only (the
    other tokens count as missing for that term).

    Both terms are divided by the normalizer of the full batch (not by the
    number of O tokens); the base loss's own ``normalize`` setting decides
    what that normalizer is. This is heavier than the paper's Eq. 1, which
    divides by the padded length M: ``MoMLoss.v2`` has the paper's weighting.
    Over ``DiceLoss``, which ignores the normalizer, L_MoM is dice over the O
    tokens alone.

    lambda_ (float): The weight of the base loss, in [0, 1]; 1 gives the base loss.
    base (Optional[TokenLoss]): The loss l of Eq. 1; None means ``CrossEntropy()``.
    majority_class (int): The id of the majority class O.
    """

    def __init__(self, *, lambda_: float = 0.5, base: Optional[TokenLoss] = None, majority_class: int = 0) -> None:
        check_setting("lambda_", lambda_, low=0, high=1, note=" (1 gives the base loss alone)")
        # confection does not check what a nested loss block resolves to, so check here.
        if base is not None and not isinstance(base, TokenLoss):
            raise TypeError(
                f"base must be a spacy-imbalance token loss (a TokenLoss, e.g. "
                f"spacy-imbalance.FocalLoss.v1), got {type(base).__name__}"
            )
        if majority_class < 0:
            raise ValueError(f"majority_class must be a class id >= 0, got majority_class={majority_class}")
        self.lambda_ = lambda_
        self.base: TokenLoss = base if base is not None else CrossEntropy()
        self.majority_class = majority_class

    @property
    def needs_class_counts(self) -> bool:
        return self.base.needs_class_counts

    @property
    def class_counts(self) -> Optional[List[int]]:
        return self.base.class_counts

    def initialize(self, class_counts: Sequence[int]) -> None:
        self.base.initialize(class_counts)

    def default_normalizer(self, truths: Ints1d) -> float:
        return self.base.default_normalizer(truths)

    def compute_gold(
        self, logits: Floats2d, gold: GoldIds, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, DeviceLoss]:
        return self._combine(logits, gold, normalizer, None)

    def _combine(
        self, logits: Floats2d, gold: GoldIds, normalizer: Optional[float], mom_normalizer: Optional[float]
    ) -> Tuple[Floats2d, DeviceLoss]:
        """lambda_ * base + (1 - lambda_) * base over the O tokens; the O-only
        term is divided by ``mom_normalizer`` (None: the base's normalizer).
        The ids are checked once, here: both terms take them as checked."""
        if self.majority_class >= logits.shape[1]:
            raise ValueError(
                f"majority_class={self.majority_class} is out of range for logits of shape {logits.shape}"
            )
        if normalizer is None:
            normalizer = self.base.default_normalizer(gold.host)
        if mom_normalizer is None:
            mom_normalizer = normalizer
        # At either end one term has weight 0: skip it rather than pay for a
        # second pass over the batch.
        if self.lambda_ == 1:
            return self.base.compute_gold(logits, gold, normalizer=normalizer)
        xp = get_array_module(logits)
        host = numpy.asarray(gold.host)
        majority_only = GoldIds(
            # the host ids with every other class missing: 1-d numpy ints, as gold.host
            cast(Ints1d, numpy.where(host == self.majority_class, host, -1).astype(host.dtype, copy=False)),
            xp.where(gold.device == self.majority_class, gold.device, -1).astype(gold.device.dtype, copy=False),
        )
        mom_grad, mom_loss = self.base.compute_gold(logits, majority_only, normalizer=mom_normalizer)
        if self.lambda_ == 0:
            return mom_grad, mom_loss
        grad, loss = self.base.compute_gold(logits, gold, normalizer=normalizer)
        weight = self.lambda_
        return weight * grad + (1 - weight) * mom_grad, loss.scaled(weight).plus(mom_loss.scaled(1 - weight))


@registry.losses("spacy-imbalance.MoMLoss.v1")
def configure_mom_loss_v1(
    *, lambda_: float = 0.5, base: Optional[TokenLoss] = None, majority_class: int = 0
) -> MoMLoss:
    return MoMLoss(lambda_=lambda_, base=base, majority_class=majority_class)


class MoMLossV2(MoMLoss):
    """MoM with the paper's normalisation (Eq. 1 and 3): over a batch of N
    sentences, L = lambda_ * L_base + (1 - lambda_) * sum_{gold O} l / (N * M),
    where M is ``max_length``, the length the paper pads every sentence to,
    and L_base keeps the base loss's own reduction (a token mean for cross
    entropy, as the paper's BERT baseline).

    The O-only term needs N, so the loss is computed per batch of sequences
    (``compute_sequences``, which ``token_ner`` calls); ``compute`` takes N as
    ``n_sequences``. A sentence longer than M keeps all its tokens (the paper
    truncates at M; nothing is dropped here), so M should be at least the
    longest training sentence for the weights to be as printed.

    lambda_ (float): The weight of the base loss, in [0, 1]; 1 gives the base loss.
    base (Optional[TokenLoss]): The loss l of Eq. 1; None means ``CrossEntropy()``.
    majority_class (int): The id of the majority class O.
    max_length (int): M of Eq. 1, the padded sentence length (the paper's 128).
    """

    per_sequence = True

    def __init__(
        self, *, lambda_: float = 0.5, base: Optional[TokenLoss] = None, majority_class: int = 0, max_length: int = 128
    ) -> None:
        super().__init__(lambda_=lambda_, base=base, majority_class=majority_class)
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ValueError(
                f"max_length (M of Eq. 1, the padded sentence length) must be an integer >= 1, got {max_length!r}"
            )
        self.max_length = max_length

    def compute(
        self,
        logits: Floats2d,
        truths: Ints1d,
        *,
        normalizer: Optional[float] = None,
        n_sequences: Optional[int] = None,
    ) -> Tuple[Floats2d, float]:
        if n_sequences is None:
            raise ValueError(_NEEDS_SEQUENCES)
        if isinstance(n_sequences, bool) or not isinstance(n_sequences, int) or n_sequences < 1:
            raise ValueError(f"n_sequences must be an integer >= 1, got {n_sequences!r}")
        mom_normalizer = float(n_sequences * self.max_length)
        grad, loss = self._combine(logits, check_gold_ids(logits, truths), normalizer, mom_normalizer)
        return grad, loss.to_float()

    def compute_gold(
        self, logits: Floats2d, gold: GoldIds, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, DeviceLoss]:
        # as the base of another loss there is no N to divide by
        raise ValueError(_NEEDS_SEQUENCES)

    def compute_sequences(self, logits: Floats2d, truths: Ints1d, lengths: Sequence[int]) -> Tuple[Floats2d, float]:
        if sum(int(n) for n in lengths) != len(truths):
            raise ValueError(f"the sequence lengths sum to {sum(int(n) for n in lengths)}, but there are {len(truths)} token rows")
        return self.compute(logits, truths, n_sequences=max(len(lengths), 1))

    def __call__(self, guesses: Floats2d, truths: Ints1d) -> Tuple[Floats2d, float]:
        # thinc's Loss API has no sequence lengths: refuse rather than guess N
        return self.compute(guesses, truths)


_NEEDS_SEQUENCES = (
    "MoMLoss.v2 averages its O-only term over sentences (Eq. 3): give n_sequences, the number "
    "of sentences whose tokens the rows hold, or call compute_sequences with their lengths"
)


@registry.losses("spacy-imbalance.MoMLoss.v2")
def configure_mom_loss_v2(
    *, lambda_: float = 0.5, base: Optional[TokenLoss] = None, majority_class: int = 0, max_length: int = 128
) -> MoMLossV2:
    """The paper's normalisation: the O-only term over N sentences x M =
    ``max_length`` padded tokens (MoM paper Eq. 1 and 3)."""
    return MoMLossV2(lambda_=lambda_, base=base, majority_class=majority_class, max_length=max_length)

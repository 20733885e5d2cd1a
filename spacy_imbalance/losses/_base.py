"""Base classes and numerics shared by the token losses.

The reduction rules are documented once, in the package docstring
(``spacy_imbalance/losses/__init__.py``).
"""
import math
from abc import abstractmethod
from numbers import Real
from typing import List, NamedTuple, Optional, Sequence, Tuple

from thinc.api import get_array_module
from thinc.loss import Loss
from thinc.types import ArrayXd, Floats1d, Floats2d, FloatsXdT, Ints1d

__all__ = [
    "TokenLoss",
    "TokenwiseLoss",
    "SoftmaxParts",
    "softmax_parts",
    "one_hot",
    "p_minus_one_hot",
    "pow_clipped",
    "check_inputs",
    "check_normalizer",
    "check_setting",
]


class TokenLoss(Loss[Floats2d, Ints1d, Floats2d, float]):
    """Base class of every loss in this package: logits and gold ids in,
    (d loss / d logits, loss) out. Subclasses implement ``compute``; the thinc
    methods and ``initialize``/``class_counts`` are shared so a component can
    treat all losses alike.
    """

    def __call__(self, guesses: Floats2d, truths: Ints1d) -> Tuple[Floats2d, float]:
        # thinc order: (grad, loss). One pass computes both.
        return self.compute(guesses, truths)

    def get_grad(self, guesses: Floats2d, truths: Ints1d) -> Floats2d:
        return self.compute(guesses, truths)[0]

    def get_loss(self, guesses: Floats2d, truths: Ints1d) -> float:
        return self.compute(guesses, truths)[1]

    @abstractmethod
    def compute(
        self, logits: Floats2d, truths: Ints1d, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, float]:
        """Compute the gradient and the loss.

        logits (Floats2d): Unnormalised scores, n_tokens x n_classes.
        truths (Ints1d): Gold class ids; negative ids are missing.
        normalizer (Optional[float]): What the summed token losses are divided
            by; None means ``default_normalizer(truths)``. Ratio losses ignore it.
        RETURNS (Tuple[Floats2d, float]): d loss / d logits and the loss.
        """
        ...

    def default_normalizer(self, truths: Ints1d) -> float:
        """The normalizer ``compute`` uses when none is given. Ratio losses
        return 1.0 because they ignore the normalizer anyway."""
        return 1.0

    # Whether the reduction needs the batch's sequences (``compute_sequences``),
    # not just its token rows: a component whose rows are not tokens of
    # sentences (sampled_spancat scores spans) must refuse such a loss.
    per_sequence = False

    def compute_sequences(self, logits: Floats2d, truths: Ints1d, lengths: Sequence[int]) -> Tuple[Floats2d, float]:
        """``compute`` for a batch of sequences whose token rows are
        concatenated in order, ``lengths`` rows each. The token components
        call this; a loss that averages per sentence overrides it, the others
        ignore the lengths."""
        return self.compute(logits, truths)

    @property
    def needs_class_counts(self) -> bool:
        """Whether ``initialize`` must be called with training class counts."""
        return False

    @property
    def class_counts(self) -> Optional[List[int]]:
        """The class counts given to ``initialize``, or None when unused."""
        return None

    def initialize(self, class_counts: Sequence[int]) -> None:
        """Receive gold-class counts from the training data. Most losses
        don't need them, so the default does nothing."""
        return None


class TokenwiseLoss(TokenLoss):
    """A loss that is a sum of per-token terms, reduced as the package
    docstring describes. Subclasses implement ``token_terms``."""

    def __init__(self, *, normalize: bool = True) -> None:
        self.normalize = normalize

    def default_normalizer(self, truths: Ints1d) -> float:
        if not self.normalize:
            return 1.0
        # max(..., 1): an all-missing batch has loss 0 and must not divide by 0.
        return float(max(int((truths >= 0).sum()), 1))

    @abstractmethod
    def token_terms(self, parts: "SoftmaxParts", gold: Ints1d) -> Tuple[Floats1d, Floats2d]:
        """Per-token losses and their gradients w.r.t. the logits, for every
        row. ``gold`` holds a valid class id on every row (missing rows carry
        a placeholder 0); their results are discarded by ``compute``."""
        ...

    def compute(
        self, logits: Floats2d, truths: Ints1d, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, float]:
        truths = check_inputs(logits, truths)
        xp = get_array_module(logits)
        if normalizer is None:
            normalizer = self.default_normalizer(truths)
        check_normalizer(normalizer)
        present = truths >= 0
        if not bool(present.any()):
            return xp.zeros_like(logits), 0.0
        gold = xp.where(present, truths, 0)
        token_losses, d_logits = self.token_terms(softmax_parts(logits), gold)
        # where() rather than multiplying by a mask, so missing rows are
        # exactly zero whatever their logits hold.
        loss = float(xp.where(present, token_losses, 0).sum()) / normalizer
        grad = xp.where(present[:, None], d_logits / normalizer, 0)
        return grad.astype(logits.dtype, copy=False), loss


class SoftmaxParts(NamedTuple):
    """log p, p and 1 - p of a row-wise softmax, each n_tokens x n_classes,
    and a boolean mask of one top (arg-max) class per row."""

    log_p: Floats2d
    p: Floats2d
    one_minus_p: Floats2d
    is_top: ArrayXd  # bool, n_tokens x n_classes: thinc.types has no bool array type


def softmax_parts(logits: Floats2d) -> SoftmaxParts:
    """A softmax that stays accurate when probabilities are 0 or 1.

    Each row is shifted by its maximum, so log p = z - z_max - log1p(rest),
    where rest sums exp(z_k - z_max) over the non-top entries. Keeping rest
    apart from the top entry's exp(0) = 1 keeps log p_top ~ -rest accurate
    where log(sum) would round it to 0 (in float32 once the logit gap passes
    ~17), and so 1 - p = -expm1(log p) stays accurate for every class, the
    top one included, instead of the 0 that 1 - exp(log p) would give.
    """
    xp = get_array_module(logits)
    n_tokens, n_classes = logits.shape
    top = logits.argmax(axis=1)
    # One column per row, by index: ties at the maximum still count once.
    is_top = xp.arange(n_classes)[None, :] == top[:, None]
    shifted = logits - logits[xp.arange(n_tokens), top][:, None]
    rest = xp.where(is_top, 0, xp.exp(shifted)).sum(axis=1)
    log_p = (shifted - xp.log1p(rest)[:, None]).astype(logits.dtype, copy=False)
    return SoftmaxParts(log_p, xp.exp(log_p), -xp.expm1(log_p), is_top)


def one_hot(gold: Ints1d, n_classes: int, like: Floats2d) -> Floats2d:
    """One-hot rows for ``gold``, with the dtype and device of ``like``."""
    xp = get_array_module(like)
    return (xp.arange(n_classes)[None, :] == gold[:, None]).astype(like.dtype)


def p_minus_one_hot(parts: SoftmaxParts, gold: Ints1d) -> Floats2d:
    """p - onehot(gold), the cross-entropy gradient, taking -(1 - p_c) from
    ``one_minus_p`` at the gold column: p_c - 1 would be 0 in float32 for a
    confident right prediction."""
    xp = get_array_module(parts.p)
    is_gold = xp.arange(parts.p.shape[1])[None, :] == gold[:, None]
    return xp.where(is_gold, -parts.one_minus_p, parts.p)


def pow_clipped(base: FloatsXdT, exponent: float) -> FloatsXdT:
    """``base ** exponent`` for a possibly negative exponent, with ``base``
    clipped to the dtype's smallest normal number first. Callers multiply the
    result by something that is 0 exactly where ``base`` is 0, so a finite
    (if huge) value gives 0 where ``0 ** negative`` would give inf * 0 = nan.
    """
    xp = get_array_module(base)
    return xp.maximum(base, xp.finfo(base.dtype).tiny) ** exponent


def check_inputs(logits: Floats2d, truths: Ints1d) -> Ints1d:
    """Validate shapes and ids; return ``truths`` as an array on the
    device of ``logits``."""
    xp = get_array_module(logits)
    truths = xp.asarray(truths)
    if logits.ndim != 2:
        raise ValueError(f"Logits must be 2-dimensional (n_tokens, n_classes), got shape {logits.shape}")
    if truths.ndim != 1 or truths.shape[0] != logits.shape[0]:
        raise ValueError(
            f"Gold ids must have shape ({logits.shape[0]},) to match logits of shape "
            f"{logits.shape}, got shape {truths.shape}"
        )
    if truths.dtype.kind not in "iu":
        if truths.size:
            raise ValueError(f"Gold ids must be integers, got dtype {truths.dtype}")
        # An empty list arrives as a float array; it holds no ids to misread.
        truths = truths.astype("int32")
    if truths.size and int(truths.max()) >= logits.shape[1]:
        raise ValueError(
            f"Gold id {int(truths.max())} is out of range for logits of shape {logits.shape} "
            f"({logits.shape[1]} classes)"
        )
    return truths


def check_setting(
    name: str,
    value: float,
    *,
    low: float,
    high: Optional[float] = None,
    low_open: bool = False,
    high_open: bool = False,
    note: str = "",
    prefix: str = "",
) -> None:
    """Raise a ValueError naming the setting unless ``value`` is a finite
    number in the interval from ``low`` to ``high`` (None: unbounded), each
    end closed unless ``*_open``. Every float hyper-parameter of the losses
    goes through here: NaN fails every comparison and inf passes a one-sided
    one, and either turns the loss into NaN at the first batch, long after
    the config was read.

    note (str): Why the range is what it is, put after it in the message.
    prefix (str): What owns the setting (e.g. "two_task_ner 'ner': ").
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{prefix}{name} must be a number, got {name}={value!r} ({type(value).__name__})")
    above = value > low if low_open else value >= low
    below = high is None or (value < high if high_open else value <= high)
    if math.isfinite(value) and above and below:
        return
    if high is None:
        interval = f"{'>' if low_open else '>='} {low} and finite"
    else:
        interval = f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    raise ValueError(f"{prefix}{name} must be {interval}{note}, got {name}={value}")


def check_normalizer(normalizer: float) -> None:
    if not normalizer > 0:
        raise ValueError(f"normalizer must be > 0, got {normalizer}")

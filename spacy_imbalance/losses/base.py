"""Base classes and numerics shared by the losses (``TokenLoss``,
``DeviceLoss``, the gold-id and setting checks), public for the components
and the losses built on them (``two_task``).

The reduction rules are documented once, in the package docstring
(``spacy_imbalance/losses/__init__.py``).

On a GPU a loss call waits for the device once: gold ids are checked on the
host before they are uploaded (``check_gold_ids``), and the loss value stays
on the device (``DeviceLoss``) until a single copy brings every term back.
"""
import math
from abc import abstractmethod
from numbers import Real
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, cast

import numpy
from thinc.api import get_array_module, to_numpy
from thinc.loss import Loss
from thinc.types import Floats1d, Floats2d, FloatsXdT, Ints1d

from ..decisions.softmax import SoftmaxParts, softmax_parts

__all__ = [
    "TokenLoss",
    "TokenwiseLoss",
    "GoldIds",
    "DeviceLoss",
    "one_hot",
    "p_minus_one_hot",
    "pow_clipped",
    "on_host",
    "check_gold_ids",
    "check_normalizer",
    "check_setting",
    "check_span_loss",
    "MAX_FLOAT32_SETTING",
]

# The largest value of a setting that meets float32 activations: the
# setting is cast to float32 (3.4e38 at most) in the arithmetic, and above
# it the loss and its gradients are inf or nan (focal gamma, dice alpha).
MAX_FLOAT32_SETTING = 1e38


class GoldIds(NamedTuple):
    """Gold class ids (negative = missing) checked on the host: ``host`` for
    counting there, ``device`` (on the logits' device) for the arithmetic.
    With numpy both are the same array."""

    host: Ints1d
    device: Ints1d

    @property
    def n_present(self) -> int:
        return int((self.host >= 0).sum())


class DeviceLoss(NamedTuple):
    """A loss value not yet copied to the host: the sum over ``terms`` of
    weight * total / divisor, each total a 0-d array on the device.
    ``to_float`` copies every total in one transfer, so that a loss of
    several terms (MoM, two_task_ner's heads) waits for the device once."""

    terms: Tuple[Tuple[float, Any, float], ...] = ()

    @classmethod
    def term(cls, total: Any, divisor: float = 1.0) -> "DeviceLoss":
        return cls(((1.0, total, divisor),))

    def scaled(self, weight: float) -> "DeviceLoss":
        return DeviceLoss(tuple((weight * w, total, divisor) for w, total, divisor in self.terms))

    def plus(self, other: "DeviceLoss") -> "DeviceLoss":
        return DeviceLoss(self.terms + other.terms)

    def to_float(self) -> float:
        if not self.terms:
            return 0.0
        totals = [total for _, total, _ in self.terms]
        if all(isinstance(total, (numpy.ndarray, numpy.generic)) for total in totals):
            totals = [float(total) for total in totals]  # numpy: nothing to copy
        else:
            totals = to_numpy(get_array_module(totals[0]).stack(totals)).tolist()
        value = 0.0
        # total / divisor in double precision, as float(total) / divisor
        for (weight, _, divisor), total in zip(self.terms, totals):
            value += weight * (total / divisor)
        return value


class TokenLoss(Loss[Floats2d, Ints1d, Floats2d, float]):
    """Base class of every loss in this package: logits and gold ids in,
    (d loss / d logits, loss) out. Subclasses implement ``compute_gold``; the thinc
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

    def compute(
        self, logits: Floats2d, truths: Ints1d, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, float]:
        """Compute the gradient and the loss.

        logits (Floats2d): Unnormalised scores, n_tokens x n_classes.
        truths (Ints1d): Gold class ids; negative ids are missing. Best given
            on the host (numpy), where they are checked before one upload;
            ids on the device are copied back once to be checked.
        normalizer (Optional[float]): What the summed token losses are divided
            by; None means ``default_normalizer(truths)``. Ratio losses ignore it.
        RETURNS (Tuple[Floats2d, float]): d loss / d logits and the loss.
        """
        grad, loss = self.compute_gold(logits, check_gold_ids(logits, truths), normalizer=normalizer)
        return grad, loss.to_float()

    @abstractmethod
    def compute_gold(
        self, logits: Floats2d, gold: GoldIds, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, DeviceLoss]:
        """``compute`` for checked gold ids, with the loss still on the device."""
        ...

    def default_normalizer(self, truths: Ints1d) -> float:
        """The normalizer ``compute`` uses when none is given (``truths`` on
        the host). Ratio losses return 1.0 because they ignore it anyway."""
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

    def compute_gold(
        self, logits: Floats2d, gold: GoldIds, *, normalizer: Optional[float] = None
    ) -> Tuple[Floats2d, DeviceLoss]:
        xp = get_array_module(logits)
        if normalizer is None:
            normalizer = self.default_normalizer(gold.host)
        check_normalizer(normalizer)
        if gold.n_present == 0:
            return xp.zeros_like(logits), DeviceLoss()
        present = gold.device >= 0
        ids = xp.where(present, gold.device, 0)
        token_losses, d_logits = self.token_terms(softmax_parts(logits), ids)
        # where() rather than multiplying by a mask, so missing rows are
        # exactly zero whatever their logits hold.
        total = xp.where(present, token_losses, 0).sum()
        grad = xp.where(present[:, None], d_logits / normalizer, 0)
        return grad.astype(logits.dtype, copy=False), DeviceLoss.term(total, normalizer)


def one_hot(gold: Ints1d, n_classes: int, like: Floats2d) -> Floats2d:
    """One-hot rows for ``gold``, with the dtype and device of ``like``."""
    xp = get_array_module(like)
    return (xp.arange(n_classes)[None, :] == gold.reshape((-1, 1))).astype(like.dtype)


def p_minus_one_hot(parts: SoftmaxParts, gold: Ints1d) -> Floats2d:
    """p - onehot(gold), the cross-entropy gradient, taking -(1 - p_c) from
    ``one_minus_p`` at the gold column: p_c - 1 would be 0 in float32 for a
    confident right prediction."""
    xp = get_array_module(parts.p)
    is_gold = xp.arange(parts.p.shape[1])[None, :] == gold.reshape((-1, 1))
    return xp.where(is_gold, -parts.one_minus_p, parts.p)


def pow_clipped(base: FloatsXdT, exponent: float) -> FloatsXdT:
    """``base ** exponent`` for a possibly negative exponent, with ``base``
    clipped to the dtype's smallest normal number first. Callers multiply the
    result by something that is 0 exactly where ``base`` is 0, so a finite
    (if huge) value gives 0 where ``0 ** negative`` would give inf * 0 = nan.
    """
    xp = get_array_module(base)
    return xp.maximum(base, xp.finfo(base.dtype).tiny) ** exponent


def on_host(array: Any) -> bool:
    """Whether ``array`` is host data (a numpy array or a list). With numpy
    as the device, device arrays are host arrays too."""
    return isinstance(array, (numpy.ndarray, list, tuple))


def check_gold_ids(logits: Floats2d, truths: Ints1d) -> GoldIds:
    """Validate shapes and ids on the host; return the ids there and on the
    device of ``logits``. Host ids (the components build them on the host)
    cost one upload; device ids one copy back, to be checked."""
    if logits.ndim != 2:
        raise ValueError(f"Logits must be 2-dimensional (n_tokens, n_classes), got shape {logits.shape}")
    host = numpy.asarray(truths) if on_host(truths) else to_numpy(truths)
    if host.ndim != 1 or host.shape[0] != logits.shape[0]:
        raise ValueError(
            f"Gold ids must have shape ({logits.shape[0]},) to match logits of shape "
            f"{logits.shape}, got shape {host.shape}"
        )
    if host.dtype.kind not in "iu":
        if host.size:
            raise ValueError(f"Gold ids must be integers, got dtype {host.dtype}")
        # An empty list arrives as a float array; it holds no ids to misread.
        host = host.astype("int32")
    if host.size and int(host.max()) >= logits.shape[1]:
        raise ValueError(
            f"Gold id {int(host.max())} is out of range for logits of shape {logits.shape} "
            f"({logits.shape[1]} classes)"
        )
    # checked above: a 1-d numpy array of integer ids, which Ints1d describes
    host_ids = cast(Ints1d, host)
    if on_host(truths) or host.dtype != truths.dtype:
        return GoldIds(host_ids, get_array_module(logits).asarray(host))
    return GoldIds(host_ids, truths)


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


def check_span_loss(loss: object, owner: str) -> None:
    """A loss for rows that are spans (``sampled_spancat``): a ``TokenLoss``
    that does not average over the sentences of a batch of tokens.

    owner (str): The component, for the message, e.g. "sampled_spancat 'spans'".
    """
    if not isinstance(loss, TokenLoss):
        raise ValueError(
            f"{owner}: loss must be a loss from spacy_imbalance.losses "
            f'(e.g. @losses = "spacy-imbalance.CrossEntropy.v1"), got {type(loss).__name__}'
        )
    if loss.per_sequence:
        # its rows are spans, not the tokens of sentences it could average over
        raise ValueError(
            f"{owner}: loss {type(loss).__name__} averages over sentences of tokens "
            "(e.g. MoMLoss.v2), which does not apply to span rows; use MoMLoss.v1 or another token loss"
        )

"""``spacy-imbalance.SplitRateAdam.v1``: Adam with one learning rate for a
fine-tuned encoder's parameters and another for everything else.

A transformer is fine-tuned at about 5e-5, but a head trained at that rate
grows so slowly that it learns the majority class ("no entity") long before it
passes the encoder a useful gradient: the fine-tuned configs predicted nothing
after 400 steps. spaCy calls one optimizer for every parameter, keyed by
``(node id, parameter name)``; the parameters of a PyTorch model (the
transformer, through thinc's ``PyTorchShim``) are named by torch's dotted
paths (``encoder.layer.0.attention.self.query.weight``), thinc's own by
plain names (``W``, ``b``, ``E``). So the key says which rate a parameter
takes, with no need to know the pipeline.
"""
from typing import Any, Dict, Iterator, List, Tuple, Union, cast

from thinc.api import Optimizer
from thinc.optimizers import ADAM_DEFAULTS, FloatOrSeq
from thinc.types import FloatsXd
from spacy.util import registry

from .checks import FLOAT32_LIMIT, FLOAT32_SMALLEST, check_number_or_schedule

KeyT = Tuple[int, str]
# a rate or a schedule, as thinc's optimizer takes them: its FloatOrSeq names a
# schedule thinc.types.Generator, the marker that lets pydantic validate a
# config's iterator, where its _set_attr_or_schedule takes any iterator (as
# check_number_or_schedule's checked schedules are)
RateOrSchedule = Union[float, List[float], Iterator[float]]


def is_torch_param(key: KeyT) -> bool:
    """Whether the optimizer key names a PyTorch module's parameter (a dotted
    torch path) rather than a thinc layer's (``W``, ``b``, ...)."""
    return isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str) and "." in key[1]


class SplitRateOptimizer(Optimizer):
    """thinc's Adam, with ``encoder_learn_rate`` (a rate or a schedule,
    stepped with the others) in place of ``learn_rate`` for PyTorch
    parameters. Weight decay and gradient clipping are shared."""

    # the current rate: thinc's _set_attr_or_schedule sets it, and
    # step_schedules advances it when it is a schedule
    encoder_learn_rate: float
    __slots__ = ["encoder_learn_rate"]

    def __init__(self, learn_rate: RateOrSchedule, *, encoder_learn_rate: RateOrSchedule, **kwargs: Any) -> None:
        super().__init__(cast(FloatOrSeq, learn_rate), **kwargs)
        self._set_attr_or_schedule("encoder_learn_rate", encoder_learn_rate)

    def __call__(self, key: KeyT, weights: FloatsXd, gradient: FloatsXd, *, lr_scale: float = 1.0):
        if not is_torch_param(key):
            return super().__call__(key, weights, gradient, lr_scale=lr_scale)
        # the rate is read inside Adam's step and weight decay; swapping it for
        # the call (rather than an lr_scale ratio) works when the heads' rate is 0
        head_rate = self.learn_rate
        self.learn_rate = self.encoder_learn_rate
        try:
            return super().__call__(key, weights, gradient, lr_scale=lr_scale)
        finally:
            self.learn_rate = head_rate


# thinc's Adam runs only with both betas in (0, 1): beta1 = 1 divides by zero
# in its bias correction, beta2 = 1 never moves, beta1 = 0 raises
# NotImplementedError at the first update and beta2 = 0 turns it into SGD
BETA: Dict[str, Any] = dict(
    low=0.0, high=1.0, low_open=True, high_open=True, note=" (at 1 Adam divides by zero or never moves; at 0 thinc's Adam is SGD or raises)"
)
# a rate or weight decay of 0 is allowed (a frozen group; no decay)
RATE: Dict[str, Any] = dict(low=0.0, high=FLOAT32_LIMIT)
SETTINGS: Dict[str, Dict[str, Any]] = {
    "learn_rate": RATE,
    "encoder_learn_rate": RATE,
    "L2": RATE,
    "beta1": BETA,
    "beta2": BETA,
    # 0 divides 0 by 0 for a weight whose gradient is 0 (NaN weights)
    "eps": dict(low=FLOAT32_SMALLEST, high=FLOAT32_LIMIT, note=" (0 turns a zero gradient into NaN)"),
    # a negative threshold flips the clipped gradient's sign; 0 is thinc's "no clipping"
    "grad_clip": dict(low=0.0, high=FLOAT32_LIMIT, note=" (0: no clipping)"),
}


@registry.optimizers("spacy-imbalance.SplitRateAdam.v1")
def create_split_rate_adam_v1(
    learn_rate: FloatOrSeq = ADAM_DEFAULTS["learn_rate"],
    encoder_learn_rate: FloatOrSeq = 5e-5,
    *,
    L2: FloatOrSeq = ADAM_DEFAULTS["L2"],
    beta1: FloatOrSeq = ADAM_DEFAULTS["beta1"],
    beta2: FloatOrSeq = ADAM_DEFAULTS["beta2"],
    eps: FloatOrSeq = ADAM_DEFAULTS["eps"],
    grad_clip: FloatOrSeq = ADAM_DEFAULTS["grad_clip"],
    L2_is_weight_decay: bool = True,
    use_averages: bool = False,
) -> SplitRateOptimizer:
    """``learn_rate`` is the heads' rate (thinc's Adam default, 0.001, the
    rate spaCy's CNN configs train the same heads at); ``encoder_learn_rate``
    the fine-tuned encoder's (5e-5, spaCy's transformer quickstart). Either
    may be a schedule (e.g. ``warmup_linear.v1``). Parameter averaging is off
    by default, as in spaCy's transformer configs: averages of a 22M-parameter
    encoder cost memory and the first epochs' weights drag them."""
    given = {"learn_rate": learn_rate, "encoder_learn_rate": encoder_learn_rate, "L2": L2, "beta1": beta1,
             "beta2": beta2, "eps": eps, "grad_clip": grad_clip}
    checked = {
        setting: check_number_or_schedule(f"SplitRateAdam.v1: {setting}", value, **SETTINGS[setting])
        for setting, value in given.items()
    }
    return SplitRateOptimizer(
        checked.pop("learn_rate"),
        **checked,
        L2_is_weight_decay=L2_is_weight_decay,
        use_averages=use_averages,
        use_radam=False,
    )

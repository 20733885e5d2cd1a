r"""The deep AUC margin loss (DAM / AUC-M; Yuan et al. 2021, "Large-scale
robust deep AUC maximization", https://arxiv.org/abs/2012.03173), as used by
the AUC NER two-task setting (AUC maximization paper, Eq. 3-4).

It scores several binary tasks at once, one per column: for NER two-task
training the entity-token head and the begin-token head (possibly one pair per
entity type). The inputs are sigmoid scores h (``Floats2d``, n_tokens x
n_tasks) and gold labels (``Ints2d``, same shape): 1 positive, 0 negative,
negative values missing. Missing entries (padding, unannotated tokens) are
removed before any mean or ratio is taken, and their rows of d_h are exactly 0.

Per task there are two learnable parameters a and b (updated by the caller's
optimizer through d_a and d_b) and a dual variable alpha >= 0 (updated by
projected gradient ascent, ``AUCMarginLoss.ascend_alpha``). m is ``margin``.

Forms (``form``), for one task with P positive and N negative non-missing tokens:

* ``"conditional"`` (the default; the paper's Eq. 3, LibAUC's AUCMLoss "v2"),
  with conditional means over the batch:

  .. math::

      L = \mathrm{mean}_{pos}(h - a)^2 + \mathrm{mean}_{neg}(h - b)^2
          + 2\alpha(m - \mathrm{mean}_{pos} h + \mathrm{mean}_{neg} h) - \alpha^2

  No positive ratio is needed. If P = 0 the positive variance term is 0 and
  the min-max term 2 alpha (...) - alpha^2, which needs both sides, is
  dropped, so L = mean_neg (h - b)^2 and d_a = d_alpha = 0 (alpha stays where
  it is). Likewise for N = 0: L = mean_pos (h - a)^2 and d_b = d_alpha = 0.

* ``"libauc"`` (LibAUC's AUCMLoss "v1", the p-weighted stochastic form), with
  means over the T = P + N non-missing tokens of the task:

  .. math::

      L = (1 - p)\,\mathrm{mean}_T[(h - a)^2 1_{pos}] + p\,\mathrm{mean}_T[(h - b)^2 1_{neg}]
          + 2\alpha(p(1 - p)m + \mathrm{mean}_T[p h 1_{neg} - (1 - p) h 1_{pos}])
          - p(1 - p)\alpha^2

  p is ``imratio`` when given, otherwise the positive ratio P / T of the
  current batch for that task, counted after removing missing tokens. With the
  batch ratio a task with P = 0 (p = 0) or N = 0 (p = 1) has L = 0 and all
  gradients 0, as in LibAUC. With a fixed ``imratio`` such a task keeps the
  terms of the side present (all finite).

A task whose tokens are all missing has loss 0 and zero gradients in both forms.

Reduction: ``loss`` is the sum over tasks of task_weights[t] * L_t (weights
default to 1), so AUC_M(en) + lambda AUC_M(be) (Eq. 4) is one call. d_h, d_a
and d_b are the gradients of that weighted sum. ``task_losses`` and
``d_alpha`` are per task and unweighted: alpha_t maximises task t's own L_t,
and a weight > 0 does not move that maximiser, whereas weighting the ascent
step would make the effective step alpha_lr * lambda (the paper uses
lambda = 100, for which the ascent would diverge).
"""
from typing import Literal, NamedTuple, Optional, Tuple, get_args

import numpy
from thinc.api import get_array_module, registry, to_numpy
from thinc.types import Floats1d, Floats2d, Ints2d

from .base import DeviceLoss, check_setting, on_host

__all__ = [
    "AUCForm",
    "MAX_MARGIN",
    "AUCMarginLoss",
    "AUCMarginResult",
    "configure_auc_margin_loss_v1",
]

# The dual variable alpha climbs to about m (up to 2m with alpha_lr = 1) and
# the loss holds 2·alpha·m and alpha² terms: float32 (3.4e38 at most) keeps
# them, and the task weights' multiples of them, finite up to m = 1e18.
MAX_MARGIN = 1e18

AUCForm = Literal["conditional", "libauc"]
AUC_FORMS: Tuple[str, ...] = get_args(AUCForm)


class AUCMarginResult(NamedTuple):
    """What ``AUCMarginLoss.compute`` returns.

    d_h (Floats2d): d loss / d h, n_tokens x n_tasks; 0 on missing entries.
    d_a (Floats1d): d loss / d a, per task.
    d_b (Floats1d): d loss / d b, per task.
    d_alpha (Floats1d): d L_t / d alpha_t per task, unweighted: the ascent
        direction for ``ascend_alpha``.
    loss (float): sum over tasks of task_weights[t] * L_t.
    task_losses (Floats1d): L_t per task, unweighted.
    """

    d_h: Floats2d
    d_a: Floats1d
    d_b: Floats1d
    d_alpha: Floats1d
    loss: float
    task_losses: Floats1d


class _Coefficients(NamedTuple):
    """Both forms, per task, written as
    L = c_pos S_pos + c_neg S_neg + 2 alpha (mu + e_neg H_neg - e_pos H_pos) - kappa alpha^2
    where S_pos = sum_pos (h - a)^2, S_neg = sum_neg (h - b)^2 and
    H_pos, H_neg are the sums of h over the positive and negative tokens."""

    c_pos: Floats1d
    c_neg: Floats1d
    e_pos: Floats1d
    e_neg: Floats1d
    mu: Floats1d
    kappa: Floats1d


class AUCMarginLoss:
    """The AUC margin loss over sigmoid scores, one binary task per column
    (forms and conventions in the module docstring).

    Not a thinc ``Loss``: besides guesses and truths it takes the per-task
    parameters a, b and alpha, and returns their gradients too.

    margin (float): The margin m, in (0, 1e18] (float32 keeps the loss finite
        there). Scores are in [0, 1], so 1.0 (LibAUC's default) asks positive
        and negative means to be a full unit apart.
    alpha_lr (float): The step of the projected ascent on alpha, in (0, 1].
    form (str): "conditional" (Eq. 3, the default) or "libauc".
    imratio (Optional[float]): The positive ratio p of the "libauc" form, in
        (0, 1); None uses each batch's own ratio. Meaningless for "conditional".
    """

    def __init__(
        self,
        *,
        margin: float = 1.0,
        alpha_lr: float = 0.1,
        form: AUCForm = "conditional",
        imratio: Optional[float] = None,
    ) -> None:
        check_setting(
            "margin",
            margin,
            low=0,
            high=MAX_MARGIN,
            low_open=True,
            note=" (scores are in [0, 1], so 1 asks for a full unit; above 1e18 the loss is not finite in float32)",
            prefix="AUCMarginLoss: ",
        )
        # The conditional form has d2L/dalpha2 = -2, so any step in (0, 1]
        # never lowers the loss in alpha (1 reflects alpha about the maximiser).
        check_setting("alpha_lr", alpha_lr, low=0, high=1, low_open=True, prefix="AUCMarginLoss: ")
        if form not in AUC_FORMS:
            raise ValueError(f"Unknown AUC margin form {form!r}: form must be one of {list(AUC_FORMS)}")
        if imratio is not None:
            if form == "conditional":
                raise ValueError(
                    "imratio is only used by form='libauc': the conditional form needs no positive "
                    f"ratio, got imratio={imratio} with form='conditional'"
                )
            check_setting(
                "imratio",
                imratio,
                low=0,
                high=1,
                low_open=True,
                high_open=True,
                note=" (or None for the batch ratio)",
                prefix="AUCMarginLoss: ",
            )
        self.margin = margin
        self.alpha_lr = alpha_lr
        self.form = form
        self.imratio = imratio

    def compute(
        self,
        h: Floats2d,
        truths: Ints2d,
        a: Floats1d,
        b: Floats1d,
        alpha: Floats1d,
        task_weights: Optional[Floats1d] = None,
    ) -> AUCMarginResult:
        """Compute the loss and its gradients for every task at once.

        h (Floats2d): Sigmoid scores, n_tokens x n_tasks.
        truths (Ints2d): 1 positive, 0 negative, < 0 missing; same shape as h.
            Best given on the host, where they are checked before one upload;
            on the device they are copied back once to be checked.
        a (Floats1d): The per-task parameter a (the positive mean's estimate).
        b (Floats1d): The per-task parameter b (the negative mean's estimate).
        alpha (Floats1d): The per-task dual variables, >= 0: checked when given
            on the host. On the device it is taken as ``ascend_alpha`` left
            it (projected onto >= 0), so that no update waits for the check.
        task_weights (Optional[Floats1d]): Per-task weights >= 0 on the loss and
            on d_h, d_a, d_b; None means 1 for every task. Checked as truths are.
        RETURNS (AUCMarginResult): The gradients, the loss (the call's one
            copy to the host) and the task losses.
        """
        truths, task_weights = _check_inputs(h, truths, a, b, alpha, task_weights)
        xp = get_array_module(h)
        pos = truths == 1
        neg = truths == 0
        n_pos = pos.sum(axis=0).astype(h.dtype)
        n_neg = neg.sum(axis=0).astype(h.dtype)
        if self.form == "conditional":
            coef = self._conditional_coefficients(n_pos, n_neg)
        else:
            coef = self._libauc_coefficients(n_pos, n_neg)
        # where() rather than multiplying by a mask, so missing entries add
        # nothing whatever h holds there (nan included). A per-task (1-d)
        # array broadcasts over the rows of an n_tokens x n_tasks one.
        diff_a = xp.where(pos, h - a, 0)
        diff_b = xp.where(neg, h - b, 0)
        h_pos = xp.where(pos, h, 0).sum(axis=0)
        h_neg = xp.where(neg, h, 0).sum(axis=0)
        gap = coef.mu + coef.e_neg * h_neg - coef.e_pos * h_pos
        task_losses = (
            coef.c_pos * (diff_a**2).sum(axis=0)
            + coef.c_neg * (diff_b**2).sum(axis=0)
            + 2 * alpha * gap
            - coef.kappa * alpha**2
        )
        # d2L/dalpha2 = -2 kappa: -2 in the conditional form, so alpha_lr = 0.5
        # jumps to the batch maximiser max(0, m - mean_pos h + mean_neg h).
        d_alpha = 2 * gap - 2 * coef.kappa * alpha
        d_a = -2 * coef.c_pos * diff_a.sum(axis=0)
        d_b = -2 * coef.c_neg * diff_b.sum(axis=0)
        d_h_pos = 2 * coef.c_pos * diff_a - 2 * (alpha * coef.e_pos)
        d_h_neg = 2 * coef.c_neg * diff_b + 2 * (alpha * coef.e_neg)
        d_h = xp.where(pos, d_h_pos, xp.where(neg, d_h_neg, 0)) * task_weights
        return AUCMarginResult(
            d_h=d_h.astype(h.dtype, copy=False),
            d_a=(task_weights * d_a).astype(a.dtype, copy=False),
            d_b=(task_weights * d_b).astype(b.dtype, copy=False),
            d_alpha=d_alpha.astype(alpha.dtype, copy=False),
            loss=DeviceLoss.term((task_weights * task_losses).sum()).to_float(),
            task_losses=task_losses.astype(h.dtype, copy=False),
        )

    def ascend_alpha(self, alpha: Floats1d, d_alpha: Floats1d) -> Floats1d:
        """One projected gradient-ascent step: max(0, alpha + alpha_lr * d_alpha).

        alpha (Floats1d): The current dual variables.
        d_alpha (Floats1d): The ``d_alpha`` of ``compute`` at ``alpha``.
        RETURNS (Floats1d): The new dual variables, never negative.
        """
        xp = get_array_module(alpha)
        return xp.maximum(alpha + self.alpha_lr * d_alpha, 0).astype(alpha.dtype, copy=False)

    def _conditional_coefficients(self, n_pos: Floats1d, n_neg: Floats1d) -> _Coefficients:
        xp = get_array_module(n_pos)
        # max(..., 1): an absent side has sums of 0, so its terms are 0.
        inv_pos = 1 / xp.maximum(n_pos, 1)
        inv_neg = 1 / xp.maximum(n_neg, 1)
        # The min-max term compares both sides: drop it when either is absent.
        both = ((n_pos > 0) & (n_neg > 0)).astype(n_pos.dtype)
        return _Coefficients(inv_pos, inv_neg, both * inv_pos, both * inv_neg, both * self.margin, both)

    def _libauc_coefficients(self, n_pos: Floats1d, n_neg: Floats1d) -> _Coefficients:
        xp = get_array_module(n_pos)
        n_present = n_pos + n_neg
        inv_present = 1 / xp.maximum(n_present, 1)
        # The batch ratio is 0 on an all-missing task; a fixed imratio is not,
        # so its terms are masked with `present` below.
        p = n_pos * inv_present if self.imratio is None else xp.full_like(n_pos, self.imratio)
        present = (n_present > 0).astype(n_pos.dtype)
        c_pos = (1 - p) * inv_present
        c_neg = p * inv_present
        pq = present * p * (1 - p)
        return _Coefficients(c_pos, c_neg, c_pos, c_neg, pq * self.margin, pq)


def _check_inputs(
    h: Floats2d,
    truths: Ints2d,
    a: Floats1d,
    b: Floats1d,
    alpha: Floats1d,
    task_weights: Optional[Floats1d],
) -> Tuple[Ints2d, Floats1d]:
    """Validate shapes and values on the host; return ``truths`` and
    ``task_weights`` as arrays on the device of ``h`` (weights of 1 when None)."""
    xp = get_array_module(h)
    if h.ndim != 2:
        raise ValueError(f"Scores h must be 2-dimensional (n_tokens, n_tasks), got shape {h.shape}")
    host = _host_truths(truths)
    if host.shape != h.shape:
        raise ValueError(f"truths must have the shape of h {h.shape}, got shape {host.shape}")
    if host.size and int(host.max()) > 1:
        raise ValueError(f"truths must be 1 (positive), 0 (negative) or < 0 (missing), got {int(host.max())}")
    n_tasks = h.shape[1]
    for name, values in (("a", a), ("b", b), ("alpha", alpha)):
        if values.shape != (n_tasks,):
            raise ValueError(f"{name} must have shape ({n_tasks},), one value per task, got shape {values.shape}")
    if on_host(alpha) and alpha.size and bool((numpy.asarray(alpha) < 0).any()):
        raise ValueError("alpha must be >= 0 (project it with ascend_alpha)")
    device_truths = truths if not on_host(truths) and host.dtype == truths.dtype else xp.asarray(host)
    if task_weights is None:
        return device_truths, xp.ones((n_tasks,), dtype=h.dtype)
    weights = numpy.asarray(task_weights if on_host(task_weights) else to_numpy(task_weights), dtype=h.dtype)
    if weights.shape != (n_tasks,):
        raise ValueError(f"task_weights must have shape ({n_tasks},), got shape {weights.shape}")
    if weights.size and bool((weights < 0).any()):
        raise ValueError("task_weights must be >= 0")
    return device_truths, xp.asarray(weights)


def _host_truths(truths: Ints2d) -> numpy.ndarray:
    """The labels on the host, as integers (an empty list arrives as floats)."""
    host = numpy.asarray(truths) if on_host(truths) else to_numpy(truths)
    if host.dtype.kind not in "iu":
        if host.size:
            raise ValueError(f"truths must be integers (1, 0, or < 0 for missing), got dtype {host.dtype}")
        host = host.astype("int32")
    return host


@registry.losses("spacy-imbalance.AUCMarginLoss.v1")
def configure_auc_margin_loss_v1(
    *,
    margin: float = 1.0,
    alpha_lr: float = 0.1,
    form: AUCForm = "conditional",
    imratio: Optional[float] = None,
) -> AUCMarginLoss:
    return AUCMarginLoss(margin=margin, alpha_lr=alpha_lr, form=form, imratio=imratio)

"""The AUC margin loss's learnable parameters, as a thinc layer of
``spacy-imbalance.TwoTaskTagger.v1``: a and b (one per binary task), updated
by the optimizer with the other weights, and the dual variables alpha,
moved by the loss's projected ascent only.

All three are params, so they stay on the model's device and are saved with
it. alpha never gets a gradient, and thinc's optimizer steps only the params
that have one (``Model.finish_update``), so the optimizer never touches it."""
from typing import Callable, Tuple

from thinc.api import Model


def build_auc_margin_params() -> Model[None, None]:
    """Parameters a, b and alpha (``nT`` binary tasks) of the AUC margin
    loss. The layer computes nothing; it is part of the model so that the
    optimizer updates a and b and serialisation keeps all three."""
    return Model(
        "auc_margin_params",
        _no_forward,
        init=_init_auc_params,
        dims={"nT": None},
        params={"a": None, "b": None, "alpha": None},
    )


def _no_forward(model: Model, X: None, is_train: bool) -> Tuple[None, Callable]:
    raise NotImplementedError("auc_margin_params holds the AUC loss's parameters and has no forward pass")


def _init_auc_params(model: Model, X: None = None, Y: None = None) -> None:
    n_tasks = model.get_dim("nT")
    # a and b start where a met margin leaves them (positives at 1, negatives
    # at 0). LibAUC starts both at 0, which, with spaCy's small Adam steps,
    # first pulls the positives' scores to 0 and saturates their sigmoids.
    model.set_param("a", model.ops.xp.ones((n_tasks,), dtype="float32"))
    model.set_param("b", model.ops.alloc1f(n_tasks))
    model.set_param("alpha", model.ops.alloc1f(n_tasks))

"""``spacy-imbalance.TwoTaskTagger.v1``/``v2``: a shared tok2vec and one linear layer
whose output columns hold every head of the two-task NER component
(entity-token and begin-token scores, plus the optional type and BIO heads;
``spacy_imbalance.pipeline.tagging.two_task.HeadLayout`` says which column is which).

The model also owns the AUC margin loss's learnable a and b (one per binary
task), so that the spaCy optimizer updates them with the other weights, and
its dual variables alpha (the param "alpha" of the ``auc_params`` layer, with
no gradient), which the loss moves by projected gradient *ascent* and the
optimizer never touches (``spacy_imbalance.layers.auc_margin_params``). The
component reaches them through ``set_n_tasks``, ``auc_state`` and
``apply_auc_step``.
"""
from typing import Callable, List, Optional, Tuple, cast

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, glorot_uniform_init, with_array, zero_init
from thinc.types import Floats1d, Floats2d

from ..layers.auc_margin_params import build_auc_margin_params
from ..losses.auc_margin import AUCMarginLoss, AUCMarginResult

InT = List[Doc]
OutT = List[Floats2d]


@registry.architectures("spacy-imbalance.TwoTaskTagger.v1")
def build_two_task_tagger_v1(tok2vec: Model[InT, OutT], nO: Optional[int] = None) -> Model[InT, OutT]:
    """``nO`` (the number of output columns) is inferred at initialize when null."""
    return _build_two_task_tagger(tok2vec, nO, zero_init)


@registry.architectures("spacy-imbalance.TwoTaskTagger.v2")
def build_two_task_tagger_v2(tok2vec: Model[InT, OutT], nO: Optional[int] = None) -> Model[InT, OutT]:
    """v1 with a random (Glorot) output layer, so that a fine-tuned encoder
    gets a gradient from the first update (see TokenTagger.v2)."""
    return _build_two_task_tagger(tok2vec, nO, glorot_uniform_init)


def _build_two_task_tagger(tok2vec: Model[InT, OutT], nO: Optional[int], init_W) -> Model[InT, OutT]:
    output_layer = Linear(nO=nO, init_W=init_W)
    scorer = chain(tok2vec, with_array(output_layer))
    auc_params = build_auc_margin_params()
    return Model(
        "two_task_tagger",
        forward,
        layers=[scorer, auc_params],
        refs={"tok2vec": tok2vec, "output_layer": output_layer, "auc_params": auc_params},
        init=init,
    )


def forward(model: Model[InT, OutT], docs: InT, is_train: bool) -> Tuple[OutT, Callable]:
    return model.layers[0](docs, is_train)


def init(model: Model[InT, OutT], X: Optional[InT] = None, Y: Optional[OutT] = None) -> None:
    model.layers[0].initialize(X=X, Y=Y)
    model.layers[1].initialize()


def get_alpha(model: Model) -> Floats1d:
    """The dual variables alpha of the ``auc_params`` layer, on its device."""
    if not model.has_param("alpha"):
        # a pipeline saved when alpha was the attr "auc_alpha" (a list)
        n_tasks = model.get_dim("nT")
        model.set_param("alpha", model.ops.asarray1f(model.attrs.get("auc_alpha") or [0.0] * n_tasks))
    # one value per task: set 1-d here, by set_alpha and at initialize
    return cast(Floats1d, model.get_param("alpha"))


def set_alpha(model: Model, alpha: Floats1d) -> None:
    # a param on the device: an AUC update reads and writes it without
    # copying to the host (a list attr cost a copy per update)
    model.set_param("alpha", model.ops.asarray1f(alpha))


def set_n_tasks(model: Model, n_tasks: int) -> None:
    """The number of binary tasks, one a, b and alpha each (before initialize)."""
    model.get_ref("auc_params").set_dim("nT", n_tasks)


def auc_state(model: Model) -> Tuple[Floats1d, Floats1d, Floats1d]:
    """The AUC margin loss's a, b and alpha, on the model's device."""
    params = model.get_ref("auc_params")
    # one value per task, as initialize sets them (layers.auc_margin_params)
    return cast(Floats1d, params.get_param("a")), cast(Floats1d, params.get_param("b")), get_alpha(params)


def apply_auc_step(model: Model, auc: AUCMarginResult, loss: AUCMarginLoss) -> None:
    """a and b get their gradients (the optimizer updates them with the
    other weights); alpha takes ``loss``'s projected ascent step."""
    params = model.get_ref("auc_params")
    params.inc_grad("a", auc.d_a)
    params.inc_grad("b", auc.d_b)
    set_alpha(params, loss.ascend_alpha(get_alpha(params), auc.d_alpha))

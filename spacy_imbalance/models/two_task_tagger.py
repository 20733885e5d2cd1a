"""``spacy-imbalance.TwoTaskTagger.v1``: a shared tok2vec and one linear layer
whose output columns hold every head of the two-task NER component
(entity-token and begin-token scores, plus the optional type and BIO heads;
``spacy_imbalance.pipeline.tagging.two_task.HeadLayout`` says which column is which).

The model also owns the AUC margin loss's learnable a and b (one per binary
task), so that the spaCy optimizer updates them with the other weights, and
its dual variables alpha (``attrs["auc_alpha"]``), which the loss moves by
projected gradient *ascent* and the optimizer must never touch.
"""
from typing import Callable, List, Optional, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, with_array, zero_init
from thinc.types import Floats1d, Floats2d

from ..layers.auc_margin_params import build_auc_margin_params

InT = List[Doc]
OutT = List[Floats2d]


@registry.architectures("spacy-imbalance.TwoTaskTagger.v1")
def build_two_task_tagger_v1(tok2vec: Model[InT, OutT], nO: Optional[int] = None) -> Model[InT, OutT]:
    """``nO`` (the number of output columns) is inferred at initialize when null."""
    output_layer = Linear(nO=nO, init_W=zero_init)
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
    return model.ops.asarray1f(model.attrs["auc_alpha"])


def set_alpha(model: Model, alpha: Floats1d) -> None:
    # a list of floats: serialisable with the model's attrs on any device
    model.attrs["auc_alpha"] = [float(x) for x in model.ops.to_numpy(alpha)]

"""The width of a model's output layer, for the entity components that size
it by their labels. Every architecture of this package (``TokenTagger``,
``TwoTaskTagger``, ``SpanScorer``) names its last linear layer
``output_layer``; the components ask these functions, not the layer."""
from typing import Optional

from thinc.api import Model


def output_width(model: Model) -> Optional[int]:
    """The output layer's number of columns, or None while it is unset
    (``nO = null`` before initialize)."""
    output_layer = model.get_ref("output_layer")
    return int(output_layer.get_dim("nO")) if output_layer.has_dim("nO") else None


def set_output_width(model: Model, width: int) -> None:
    """Size the output layer before the model is initialized."""
    model.get_ref("output_layer").set_dim("nO", width)

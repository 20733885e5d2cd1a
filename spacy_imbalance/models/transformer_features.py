"""``spacy-imbalance.TransformerFeatures.v1``: a frozen transformer's features
as the ``embed`` layer of ``spacy.Tok2Vec.v2``.

The transformer is frozen and its token features are cached per document, so
a CNN (``spacy.MaxoutWindowEncoder.v2``) or a BiLSTM
(``spacy.TorchBiLSTMEncoder.v1``) on top is all that trains: the
feature-based setting of the BERT paper, affordable on a CPU. Put it in the
shared ``tok2vec`` component and every component reaches it through
``spacy.Tok2VecListener.v1``, as with any other tok2vec.
"""
from typing import List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Maxout, Model, chain, with_array
from thinc.types import Floats2d

from ..layers.frozen_transformer import FrozenTransformerShim
from ..layers.transformer_mix import transformer_mix


@registry.architectures("spacy-imbalance.TransformerFeatures.v1")
def build_transformer_features_v1(
    name: str,
    width: int,
    layers: int = 4,
    window: int = 128,
    stride: int = 96,
    max_batch_items: int = 4096,
    cache_size: int = 100_000,
) -> Model[List[Doc], List[Floats2d]]:
    """A learned mix of the last ``layers`` hidden states of the frozen
    transformer ``name``, mean-pooled over each token's wordpieces, then a
    maxout layer (with layer normalisation) to ``width``.

    name (str): a local folder, a Hugging Face model name, or (through
        ``spacy-imbalance.model_path.v1``) a package that ships a model. The
        weights are saved with the pipeline, so loading it needs no model files.
    width (int): the output width (the encoder's width).
    layers (int): how many of the last hidden states are mixed (the
        embedding output counts as one).
    window (int): the most wordpieces per transformer input, special tokens
        included; longer documents are read in overlapping windows.
    stride (int): wordpieces between the starts of consecutive windows (at
        most ``window`` minus the special tokens, so that windows overlap or meet).
    max_batch_items (int): the most padded wordpieces per forward pass.
    cache_size (int): the most documents whose features are kept in memory
        (about n_tokens x layers x hidden x 4 bytes each); 0 turns it off.
    """
    for setting, value, least in (
        ("width", width, 1),
        ("layers", layers, 1),
        ("window", window, 2),
        ("stride", stride, 1),
        ("max_batch_items", max_batch_items, 1),
        ("cache_size", cache_size, 0),
    ):
        if value < least:
            raise ValueError(
                f"spacy-imbalance.TransformerFeatures.v1: '{setting}' = {value}, must be >= {least}"
            )
    if stride >= window:
        raise ValueError(
            f"spacy-imbalance.TransformerFeatures.v1: 'stride' = {stride} must be smaller than "
            f"'window' = {window}, or windows would leave wordpieces out"
        )
    shim = FrozenTransformerShim(
        name,
        layers=layers,
        window=window,
        stride=stride,
        max_batch_items=max_batch_items,
        cache_size=cache_size,
    )
    mix = transformer_mix(shim)
    # as spaCy's MultiHashEmbed ends: dropout set by the trainer, then layer norm
    output = Maxout(nO=width, nP=3, dropout=0.0, normalize=True)
    model = chain(mix, with_array(output))
    model.set_ref("transformer", mix)
    model.set_ref("output_layer", output)
    return model

"""``spacy-imbalance.TransformerFeatures.v1``: a frozen transformer's features
as the ``embed`` layer of ``spacy.Tok2Vec.v2``.

The transformer is frozen and its token features are cached per document, so
a CNN (``spacy.MaxoutWindowEncoder.v2``) or a BiLSTM
(``spacy.TorchBiLSTMEncoder.v1``) on top is all that trains: the
feature-based setting of the BERT paper, affordable on a CPU. Put it in the
shared ``tok2vec`` component and every component reaches it through
``spacy.Tok2VecListener.v1``, as with any other tok2vec.
"""
from typing import List, Sequence, cast

from spacy.ml.featureextractor import FeatureExtractor
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import HashEmbed, Maxout, Model, chain, concatenate, list2ragged, ragged2list, with_array
from thinc.types import Floats2d, Ints2d, Ragged

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
    attrs: Sequence[str] = ("SHAPE",),
    rows: Sequence[int] = (2500,),
) -> Model[List[Doc], List[Floats2d]]:
    """A learned mix of the last ``layers`` hidden states of the frozen
    transformer ``name``, mean-pooled over each token's wordpieces, next to
    hash embeddings of the token attributes ``attrs`` (as ``MultiHashEmbed``
    has them), then a maxout layer (with layer normalisation) to ``width``.

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
    attrs (Sequence[str]): token attributes embedded beside the features. The
        default, SHAPE, gives back the casing that uncased models (MiniLM,
        BERT uncased) drop and that NER leans on; [] for the features alone.
    rows (Sequence[int]): the rows of each attribute's hash table.
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
    if len(rows) != len(attrs):
        raise ValueError(
            f"spacy-imbalance.TransformerFeatures.v1: 'rows' has {len(rows)} entries, "
            f"'attrs' {len(attrs)}: one table size per attribute"
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
    features: Model[List[Doc], Ragged] = chain(mix, list2ragged())
    if attrs:
        # seeds as MultiHashEmbed's, so that a table starts as it would there
        tables: List[Model[Ints2d, Floats2d]] = [
            HashEmbed(width, n_rows, column=i, seed=8 + i, dropout=0.0) for i, n_rows in enumerate(rows)
        ]
        # list2ragged's type is generic over its lists: the cast is MultiHashEmbed's own
        hashed: Model[List[Doc], Ragged] = chain(
            FeatureExtractor(list(attrs)), cast(Model[List[Ints2d], Ragged], list2ragged()), with_array(concatenate(*tables))
        )
        features = concatenate(features, hashed)
    # as spaCy's MultiHashEmbed ends: dropout set by the trainer, then layer norm
    output = Maxout(nO=width, nP=3, dropout=0.0, normalize=True)
    model = chain(features, with_array(output), ragged2list())
    model.set_ref("transformer", mix)
    model.set_ref("output_layer", output)
    return model

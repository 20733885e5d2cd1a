"""``spacy-imbalance.TokenTagger.v1``/``v2``: tok2vec -> one linear layer ->
per-token tag scores.

Unlike spaCy's ``Tagger.v2`` the output is *unnormalised* (logits): the
losses of ``spacy_imbalance.losses`` take logits so that they can use a stable
log-softmax, and the component normalises for decoding.
"""
from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, glorot_uniform_init, with_array, zero_init
from thinc.types import Floats2d


@registry.architectures("spacy-imbalance.TokenTagger.v1")
def build_token_tagger_v1(
    tok2vec: Model[List[Doc], List[Floats2d]], nO: Optional[int] = None
) -> Model[List[Doc], List[Floats2d]]:
    """``nO`` (the number of tags) is inferred at initialize when null.
    The output layer starts at zero, as spaCy's tagger does, so every tag
    starts equally likely."""
    return _build_token_tagger(tok2vec, nO, zero_init)


@registry.architectures("spacy-imbalance.TokenTagger.v2")
def build_token_tagger_v2(
    tok2vec: Model[List[Doc], List[Floats2d]], nO: Optional[int] = None
) -> Model[List[Doc], List[Floats2d]]:
    """v1 with a random (Glorot) output layer: a zero output layer passes the
    encoder no gradient until its weights grow, which at a fine-tuned
    transformer's rate takes hundreds of updates (issue 30). The fine-tuned
    configs use it; on a CNN either learns at once."""
    return _build_token_tagger(tok2vec, nO, glorot_uniform_init)


def _build_token_tagger(tok2vec: Model, nO: Optional[int], init_W) -> Model[List[Doc], List[Floats2d]]:
    output_layer = Linear(nO=nO, init_W=init_W)
    model = chain(tok2vec, with_array(output_layer))
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("output_layer", output_layer)
    return model

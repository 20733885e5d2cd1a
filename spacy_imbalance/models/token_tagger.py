"""``spacy-imbalance.TokenTagger.v1``: tok2vec -> one linear layer -> per-token
tag scores.

Unlike spaCy's ``Tagger.v2`` the output is *unnormalised* (logits): the
losses of ``spacy_imbalance.losses`` take logits so that they can use a stable
log-softmax, and the component normalises for decoding.
"""
from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, with_array, zero_init
from thinc.types import Floats2d


@registry.architectures("spacy-imbalance.TokenTagger.v1")
def build_token_tagger_v1(
    tok2vec: Model[List[Doc], List[Floats2d]], nO: Optional[int] = None
) -> Model[List[Doc], List[Floats2d]]:
    """``nO`` (the number of tags) is inferred at initialize when null.
    The output layer starts at zero, as spaCy's tagger does, so every tag
    starts equally likely."""
    output_layer = Linear(nO=nO, init_W=zero_init)
    model = chain(tok2vec, with_array(output_layer))
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("output_layer", output_layer)
    return model

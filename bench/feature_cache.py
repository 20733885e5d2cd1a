"""What the feature cache of ``spacy-imbalance.TransformerFeatures.v1`` buys
against fine-tuning the same transformer: the pieces of the measurement
(scripts/feature_cache.py)."""
from pathlib import Path
from typing import TYPE_CHECKING, List, Tuple

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.training import Example

    from spacy_imbalance.layers.frozen_transformer import FrozenTransformerShim

# a document's entities: (start, end, label) each
Entities = Tuple[Tuple[int, int, str], ...]


def init(config_path: Path, corpus: Path, seed: int) -> Tuple["Language", List["Example"], List["Example"]]:
    """The initialised pipeline of a config, and the train and dev examples of ``corpus``."""
    from spacy.training import Corpus
    from spacy.training.initialize import init_nlp
    from spacy.util import fix_random_seed, load_config

    config = load_config(
        config_path,
        overrides={"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"), "system.seed": seed},
    )
    nlp = init_nlp(config)
    fix_random_seed(seed)
    train = list(Corpus(corpus / "train.spacy", gold_preproc=True)(nlp))
    dev = list(Corpus(corpus / "dev.spacy", gold_preproc=True)(nlp))
    return nlp, train, dev


def features_shim(nlp: "Language") -> "FrozenTransformerShim":
    """The shim that holds the frozen transformer and its cache."""
    from spacy_imbalance.layers.frozen_transformer import FrozenTransformerShim

    return next(shim for node in nlp.get_pipe("tok2vec").model.walk() for shim in node.shims if isinstance(shim, FrozenTransformerShim))


def predictions(nlp: "Language", examples: List["Example"]) -> List[Entities]:
    # the examples' own tokens (gold_preproc), so that every run sees the same words
    docs = nlp.pipe(eg.predicted.copy() for eg in examples)
    return [tuple((ent.start, ent.end, ent.label_) for ent in doc.ents) for doc in docs]

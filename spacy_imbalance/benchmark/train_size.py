"""How large a config's training set is: the examples and words its train
reader yields per epoch, against the sentences of the plain corpus."""
from typing import Dict

from .layout import Layout
from .options import overrides_for_load, with_seed


def train_set_size(layout: Layout, config: str, corpus: str, seed: int, overrides: Dict[str, str]) -> Dict[str, float]:
    """How many examples the config's train reader yields per epoch, against
    the sentences of the plain corpus (paper Table 6's size increase factor)."""
    import spacy
    from spacy.util import load_config, registry

    from spacy_imbalance.corpus.source import sentence_examples, source_corpus

    train = layout.corpus(corpus, "train")
    cfg = load_config(
        layout.config(config),
        overrides={**overrides_for_load(with_seed(overrides, seed)), "paths.train": str(train), "paths.dev": str(train), "system.seed": seed},
        interpolate=True,
    )
    nlp = spacy.blank(cfg["nlp"]["lang"])
    reader = registry.resolve({"train": cfg["corpora"]["train"]})["train"]
    # spacy.Corpus.v1 as our readers read it: from the Docs the train reader has just deserialised
    plain = source_corpus("train_set_size", train, None, gold_preproc=True)
    n_examples = n_words = 0
    for example in reader(nlp):
        n_examples += 1
        n_words += len(example.reference)
    sentences = sentence_examples(plain, nlp)
    plain_words = sum(len(eg.reference) for eg in sentences)
    return {
        "train_examples": n_examples,
        "train_sentences": len(sentences),
        "size_factor": n_examples / len(sentences),
        # the batcher batches by words, so an epoch's steps scale with the words
        "word_factor": n_words / max(plain_words, 1),
    }

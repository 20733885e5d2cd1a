"""Training corpora: reading (CoNLL, ``.spacy``, the embedded default corpus),
sentence splitting, statistics, and one folder per corpus method with its
logic beside its registered reader:

* ``resampling/``: sentence-level resampling (``ResampledCorpus.v1``);
* ``undersampling/``: balanced undersampling (``balanced_undersampling.v1`` augmenter);
* ``augmentation/``: simple data augmentation (``AugmentedCorpus.v1``);
* ``masking/``: synthetic unlabeled entities (``MaskedCorpus.v1``);
* ``subsampling/``: low-resource and imbalanced subsets (``SubsampledCorpus.v1``);
* ``distant/``: distantly supervised labels by dictionary matching (``DistantCorpus.v1``);
* ``scopes/``: per-document label scopes, the entity types a corpus annotates
  (``ScopedCorpus.v1``), and several corpora as one (``CombinedCorpus.v1``).
"""

"""spacy-imbalance: NER components, losses, readers and scorers for imbalanced
and partially annotated data. Everything is registered through entry points,
so importing this package is never needed for ``spacy train``."""
__version__ = "0.1.0"

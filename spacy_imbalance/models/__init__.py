"""Registered architectures (``spacy_architectures``), built from layers."""

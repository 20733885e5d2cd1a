import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import typer
from wasabi import msg

from .. import __version__
from ..init_config import ConfigChoice, build_config, render, validate_config
from ..init_config.base import build_on_base, entities_target, read_base
from ..init_config.encoders import DESCRIPTIONS
from ..init_config.options import (
    COMPONENTS, DEFAULT_HEAD, DEFAULT_SAMPLER, ENCODERS, HEADS, LOSSES, READERS, SAMPLERS, SCOPED_COMPONENTS, TWO_TASK_LOSSES,
)
from ..init_config.scoped import ScopedPath
from ..corpus.docs_io import write_text_atomic
from ._app import app, fail, setting_value, split_sets
from .checks import check_output_file

# spacy-transformers' autocast switch (float16 on CUDA, with a gradient scaler)
MIXED_PRECISION = "components.transformer.model.mixed_precision"
# what each encoder needs beyond the package, for a clear message
EXTRAS = {"features": "minilm", "transformer": "transformers,minilm"}


@app.command("init-config")
def init_config_cli(
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .cfg file to write, or - for stdout"),
    component: str = typer.Option(..., "--component", "-c", help=f"The NER component: {', '.join(COMPONENTS)}"),
    sampler: Optional[str] = typer.Option(None, "--sampler", help=f"sampled_spancat's negatives: {', '.join(SAMPLERS)} (default {DEFAULT_SAMPLER})"),
    head: Optional[str] = typer.Option(
        None, "--head",
        help=f"sampled_spancat's span head: {', '.join(HEADS)} (default {DEFAULT_HEAD}; v1 is the first release's, docs/sampled_spancat.md)",
    ),
    loss: Optional[str] = typer.Option(
        None, "--loss",
        help=f"token_ner's or sampled_spancat's loss: {', '.join(LOSSES)} (default ce); two_task_ner's objective: {', '.join(TWO_TASK_LOSSES)} (default auc)",
    ),
    resample: Optional[str] = typer.Option(None, "--resample", help=f"A train reader that rebalances the corpus: {', '.join(READERS)}"),
    encoder: Optional[str] = typer.Option(
        None, "--encoder", help=f"{', '.join(ENCODERS)}; default transformer with --gpu, else cnn"
    ),
    gpu: bool = typer.Option(False, "--gpu", help="The pipeline trains on a GPU: a fine-tuned transformer unless --encoder says otherwise"),
    mixed_precision: bool = typer.Option(
        False, "--mixed-precision",
        help="Fine-tune in mixed precision (float16 autocast with a gradient scaler; CUDA GPUs only, ignored on a CPU): --encoder transformer only",
    ),
    lang: str = typer.Option("en", "--lang", help="The language code of the pipeline"),
    scoped: List[str] = typer.Option(
        [], "--scoped", metavar="PATH=LABEL,LABEL",
        help=f"A training corpus (.spacy file or folder, or CoNLL file) that annotates only the entity types LABEL,LABEL; repeatable: the train corpus reads them all, each with its label scope, and the component's labels are their union ({' and '.join(SCOPED_COMPONENTS)} with --loss ce, wce1, wce2 or focal; docs/label_scopes.md)",
    ),
    sets: List[str] = typer.Option([], "--set", help="A setting KEY=VALUE set last (spaCy's dotted names), e.g. components.sampled_spancat.max_span_width=12; repeatable"),
    base: Optional[str] = typer.Option(
        None, "--base",
        help="A trained pipeline (package name or folder, e.g. en_core_web_sm) to add the component to: its components are sourced and frozen, its tokenizer and vocab copied (docs/existing_pipelines.md)",
    ),
    listen: bool = typer.Option(False, "--listen", help="With --base: the component listens to the base's tok2vec (frozen) instead of an encoder of its own"),
    ents: bool = typer.Option(
        False, "--ents",
        help="With --base: write the component's entities to doc.ents (the base's own entities win where they overlap) instead of doc.spans[COMPONENT]",
    ),
    force: bool = typer.Option(False, "--force", help="Replace OUTPUT if it exists"),
) -> None:
    """A filled, validated training config for a component and the imbalance methods chosen for it."""
    if base is None and (listen or ents):
        fail(f"{'--listen' if listen else '--ents'} applies to a component added to a trained pipeline: give --base PIPELINE")
    if base is not None and gpu and encoder is None:
        fail("--gpu with --base: a fine-tuned transformer is not added to a trained pipeline; give --encoder cnn, vectors or features, or --listen")
    encoder = encoder or ("transformer" if gpu else "cnn")
    overrides = parse_sets(sets)
    if mixed_precision:
        if not encoder.startswith("transformer"):
            fail(f"--mixed-precision applies to a fine-tuned transformer (--encoder transformer), not --encoder {encoder}")
        overrides[MIXED_PRECISION] = True
    choice = ConfigChoice(
        component, sampler=sampler, loss=loss, resample=resample, head=head, encoder=encoder, lang=lang, overrides=overrides,
        scoped=parse_scoped(scoped),
    )
    to_stdout = str(output) == "-"
    if not to_stdout:
        check_config_output(output, force)
    base_source = None
    try:
        if base is not None:
            base_pipeline = read_base(base)
            # what the config sources (a folder as its absolute path), so that the header's command writes it again
            base_source = base_pipeline.name
            config = build_on_base(choice, base_pipeline, listen=listen, ents=ents)
        else:
            config = build_config(choice)
    except ValueError as err:
        fail(str(err))
    try:
        validate_config(config)
    except ImportError as err:
        if choice.encoder in EXTRAS:
            fail(f"--encoder {choice.encoder} needs `pip install spacy-imbalance[{EXTRAS[choice.encoder]}]`: {err}")
        fail(f"The config needs a package that is not installed: {err}")
    except Exception as err:  # spaCy's ConfigValidationError and the errors of factories and architectures
        fail(f"The config is not valid: {err}")
    command = choice.command() + (f" --base {shlex.quote(base_source)}" if base_source else "") + (" --listen" if listen else "") + (" --ents" if ents else "")
    text = render(config, header=[f"spacy-imbalance {__version__} init-config {command}"])
    if to_stdout:
        sys.stdout.write(text)
        return
    try:
        # atomic: a full disk leaves the old file (or none), never half a config
        write_text_atomic(output, text)
    except (OSError, ValueError) as err:
        fail(f"Could not write OUTPUT {output}: {getattr(err, 'strerror', None) or err}")
    if base is not None:
        on = f"listening to {base}'s tok2vec" if listen else f"on {DESCRIPTIONS[choice.encoder]}"
        where = entities_target(config["components"][component])
        msg.good(f"Saved a config adding {component} ({on}; entities to {where}) to {base}, kept frozen: {output}")
        return
    msg.good(f"Saved a {component} config on {DESCRIPTIONS[choice.encoder]}: {output}")
    if choice.encoder == "transformer" and not gpu:
        msg.warn("Fine-tuning a transformer takes hours on a CPU: train it with --gpu-id 0")
    if choice.encoder == "vectors" and config["paths"]["vectors"] is None:
        msg.warn(f"No default vectors for --lang {lang}: train with --paths.vectors (a pipeline or a folder with vectors)")
    train = "" if choice.scoped else " --paths.train TRAIN.spacy"
    msg.text(f"Train it: python -m spacy train {output}{train} --paths.dev DEV.spacy", show=True)


def check_config_output(output: Path, force: bool) -> None:
    """OUTPUT is a new file (or an old one with --force) that can be written,
    checked before the config is built; '-' (stdout) is not checked."""
    if output.is_dir():
        fail(f"{output} is a folder: give the path of the config file, e.g. {output / 'config.cfg'}")
    check_output_file(output, "OUTPUT")
    if output.exists() and not force:
        fail(f"{output} exists: give another path, or --force to replace it")


def parse_scoped(values: List[str]) -> Tuple[ScopedPath, ...]:
    """--scoped PATH=LABEL,LABEL options as (path, labels) pairs, each path an
    existing file or folder (a typo is found here, not when training starts);
    the labels are checked with the other choices (ConfigChoice.check)."""
    scoped = []
    for value in values:
        path, sep, labels = value.rpartition("=")
        if not sep:
            fail(f"--scoped {value!r}: give PATH=LABEL,LABEL, e.g. --scoped corpus/people.spacy=PER,ORG")
        if path and not Path(path).exists():
            fail(f"--scoped {value}: no such file or folder: {path}")
        scoped.append((path, tuple(label.strip() for label in labels.split(","))))
    return tuple(scoped)


def parse_sets(sets: List[str]) -> Dict[str, Any]:
    """--set KEY=VALUE pairs, the values read as spaCy's CLI overrides."""
    return {key: setting_value(value) for key, value in split_sets(sets).items()}

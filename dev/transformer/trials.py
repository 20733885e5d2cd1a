"""The fine-tuning trials of configs/transformer_trials.yml on WNUT-2017 dev:
each trial trains a config with its settings for a number of epochs,
evaluating dev once per epoch (scripts/transformer_trials.py)."""
from pathlib import Path
from typing import Any, Dict

import srsly

from .configs import config_at_revision


def steps_per_epoch(config: Path, train: Path, overrides: Dict[str, Any]) -> int:
    """The batches the config's batcher makes of one epoch of train."""
    import spacy
    from spacy.training import Corpus
    from spacy.util import load_config, registry

    cfg = load_config(config, overrides={"paths.train": str(train), "paths.dev": str(train), **overrides}, interpolate=True)
    batcher = registry.resolve({"b": cfg["training"]["batcher"]})["b"]
    nlp = spacy.blank(cfg["nlp"]["lang"])
    examples = list(Corpus(str(train), gold_preproc=True)(nlp))
    return sum(1 for _ in batcher(examples))


def trial_folder(root: Path) -> Path:
    """Where the trials train, and keep configs that are not shipped ones."""
    return root / "training" / "transformer_trials"


def kept_config(root: Path, name: str, text: str) -> Path:
    """A trial's own config file, in training/."""
    out = trial_folder(root) / f"{name}.cfg"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf8")
    return out


def written_config(root: Path, name: str, options: Dict[str, Any]) -> Path:
    """A config init-config writes from ``options`` (component, sampler, loss,
    head, encoder), in training/: a trial's, not a shipped one."""
    from spacy_imbalance.init_config import ConfigChoice, build_config, render

    choice = ConfigChoice(
        options["component"], sampler=options.get("sampler"), loss=options.get("loss"), head=options.get("head"), encoder=options["encoder"],
    )
    return kept_config(root, name, render(build_config(choice), header=[f"init-config {choice.command()}"]))


def config_at(root: Path, name: str, config: str, revision: str) -> Path:
    """configs/<config>.cfg as committed at git ``revision``, in training/: a
    trial that ran before the shipped recipe changed keeps its config."""
    return kept_config(root, name, config_at_revision(root, revision, config))


def trial_config(root: Path, name: str, spec: Dict[str, Any]) -> Path:
    if "init_config" in spec:
        return written_config(root, name, spec["init_config"])
    if "revision" in spec:
        return config_at(root, name, spec["config"], str(spec["revision"]))
    return root / "configs" / f"{spec['config']}.cfg"


def run(root: Path, name: str, spec: Dict[str, Any], defaults: Dict[str, Any], corpus: Path, folder: Path) -> Dict[str, Any]:
    from spacy_imbalance.init_config import config_fingerprint
    from spacy_imbalance.sweeps import Trial, run_trial
    from spacy_imbalance.sweeps.provenance import command_record

    epochs = int(spec.get("epochs", defaults["epochs"]))
    seed = int(spec.get("seed", defaults["seed"]))
    overrides = {key: value for key, value in (spec.get("set") or {}).items()}
    config = trial_config(root, name, spec)
    sha = config_fingerprint(config.read_text(encoding="utf8"))
    metrics = folder / f"{name}.json"
    if metrics.exists():
        done = srsly.read_json(metrics)
        if done.get("config_sha256") == sha and done.get("overrides") == overrides and done.get("epochs") == epochs:
            print(f"{name}: done before, skipped ({metrics})", flush=True)
            return done
    per_epoch = steps_per_epoch(config, corpus / "train.spacy", overrides)
    max_steps = per_epoch * epochs
    trial = Trial(
        name=f"transformer trial {name}", config=str(config), output=str(trial_folder(root) / name),
        metrics=str(metrics), train=str(corpus / "train.spacy"), dev=str(corpus / "dev.spacy"), test=str(corpus / "dev.spacy"),
        seed=seed, max_steps=max_steps,
        # one evaluation per epoch and no early stop: the whole dev curve
        overrides={**{k: str(v) for k, v in overrides.items()}, "training.eval_frequency": str(per_epoch), "training.patience": "0"},
    )
    print(f"{name}: {epochs} epochs of {per_epoch} steps ({max_steps} steps) ...", flush=True)
    report = run_trial(trial)
    report.update(
        {"trial": name, "config": spec.get("config") or f"init-config {' '.join(f'--{k} {v}' for k, v in spec['init_config'].items())}", "revision": spec.get("revision"), "config_sha256": sha, "overrides": overrides,
         "epochs": epochs, "steps_per_epoch": per_epoch, "seed": seed, "scored_on": "dev",
         "provenance": {**report.get("provenance", {}), "command": command_record(trial.overrides)}}
    )
    srsly.write_json(metrics, report, indent=0)
    print(f"{name}: dev macro-F1 {100 * report['macro']['f']:.1f}, micro-F1 {100 * report['micro']['f']:.1f} ({report['train_seconds'] / 60:.0f} min)", flush=True)
    return report

"""The fine-tuning trials of configs/transformer_trials.yml on WNUT-2017 dev
(issue 30): each trial trains a config with its settings for a number of
epochs, evaluates dev once per epoch, and scores model-best on dev. Writes
metrics/wnut17/transformer_trials/<trial>.json (the dev report and curve) and
metrics/wnut17/transformer_trials.md (every trial, in the order of the file).

A finished trial (same config fingerprint, settings and epochs) is skipped,
so the script resumes where it stopped; a trial cut off part-way trains again.

    python scripts/transformer_trials.py            # every trial, one at a time
    python scripts/transformer_trials.py --only spancat_uniform-base
    python scripts/transformer_trials.py --table    # the summary only
"""
from pathlib import Path
from typing import Any, Dict, List, Optional

import srsly
import typer

ROOT = Path(__file__).resolve().parent.parent
TRIALS = ROOT / "configs" / "transformer_trials.yml"


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


def written_config(name: str, options: Dict[str, Any]) -> Path:
    """A config init-config writes from ``options`` (component, sampler, loss,
    encoder), in training/: a trial's, not a shipped one."""
    from spacy_imbalance.init_config import ConfigChoice, build_config, render

    choice = ConfigChoice(options["component"], sampler=options.get("sampler"), loss=options.get("loss"), encoder=options["encoder"])
    out = ROOT / "training" / "transformer_trials" / f"{name}.cfg"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(build_config(choice), header=[f"init-config {choice.command()}"]), encoding="utf8")
    return out


def config_at(name: str, config: str, revision: str) -> Path:
    """configs/<config>.cfg as committed at git ``revision``, in training/: a
    trial that ran before the shipped recipe changed keeps its config."""
    import subprocess

    text = subprocess.run(
        ["git", "show", f"{revision}:configs/{config}.cfg"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    out = ROOT / "training" / "transformer_trials" / f"{name}.cfg"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf8")
    return out


def trial_config(name: str, spec: Dict[str, Any]) -> Path:
    if "init_config" in spec:
        return written_config(name, spec["init_config"])
    if "revision" in spec:
        return config_at(name, spec["config"], str(spec["revision"]))
    return ROOT / "configs" / f"{spec['config']}.cfg"


def run(name: str, spec: Dict[str, Any], defaults: Dict[str, Any], corpus: Path, folder: Path) -> Dict[str, Any]:
    from spacy_imbalance.init_config import config_fingerprint
    from spacy_imbalance.sweeps import Trial, run_trial

    epochs = int(spec.get("epochs", defaults["epochs"]))
    seed = int(spec.get("seed", defaults["seed"]))
    overrides = {key: value for key, value in (spec.get("set") or {}).items()}
    config = trial_config(name, spec)
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
        name=f"transformer trial {name}", config=str(config), output=str(ROOT / "training" / "transformer_trials" / name),
        metrics=str(metrics), train=str(corpus / "train.spacy"), dev=str(corpus / "dev.spacy"), test=str(corpus / "dev.spacy"),
        seed=seed, max_steps=max_steps,
        # one evaluation per epoch and no early stop: the whole dev curve
        overrides={**{k: str(v) for k, v in overrides.items()}, "training.eval_frequency": str(per_epoch), "training.patience": "0"},
    )
    print(f"{name}: {epochs} epochs of {per_epoch} steps ({max_steps} steps) ...", flush=True)
    report = run_trial(trial)
    report.update(
        {"trial": name, "config": spec.get("config") or f"init-config {' '.join(f'--{k} {v}' for k, v in spec['init_config'].items())}", "revision": spec.get("revision"), "config_sha256": sha, "overrides": overrides,
         "epochs": epochs, "steps_per_epoch": per_epoch, "seed": seed, "scored_on": "dev"}
    )
    srsly.write_json(metrics, report, indent=0)
    print(f"{name}: dev macro-F1 {100 * report['macro']['f']:.1f}, micro-F1 {100 * report['micro']['f']:.1f} ({report['train_seconds'] / 60:.0f} min)", flush=True)
    return report


def _setting_name(key: str) -> str:
    # encoder_learn_rate.initial_rate reads better as encoder_learn_rate
    parts = key.split(".")
    return parts[-2] if parts[-1] == "initial_rate" else parts[-1]


def _value(value: Any) -> str:
    # YAML's 3.0e-4 arrives as 0.00030000000000000003
    return f"{value:g}" if isinstance(value, float) else str(value)


def reports(names: List[str], folder: Path):
    """(name, report) of each trial in order; report None for one not run yet."""
    for name in names:
        path = folder / f"{name}.json"
        yield name, srsly.read_json(path) if path.exists() else None


def table(names: List[str], folder: Path) -> str:
    lines = [
        "| trial | config | settings | epochs | dev macro-F1 | dev micro-F1 | best epoch | dev macro-F1 per epoch | minutes |",
        "| --- | --- | --- | --: | --: | --: | --: | --- | --: |",
    ]
    for name, r in reports(names, folder):
        if r is None:
            lines.append(f"| {name} | | not run yet | | | | | | |")
            continue
        # spaCy evaluates once before the first update (step 0): not an epoch
        curve = [(step // r["steps_per_epoch"], score) for step, score in r.get("dev_curve") or [] if step > 0]
        best = max(curve, key=lambda point: point[1])[0] if curve else ""
        settings = ", ".join(f"{_setting_name(k)} = {_value(v)}" for k, v in r["overrides"].items()) or "the recipe"
        config = f"{r['config']} at {r['revision']}" if r.get("revision") else r["config"]
        lines.append(
            f"| {name} | {config} | {settings} | {r['epochs']} | {100 * r['macro']['f']:.1f} | {100 * r['micro']['f']:.1f} "
            f"| {best} | {' '.join(f'{100 * score:.0f}' for _, score in curve)} | {r['train_seconds'] / 60:.0f} |"
        )
    return "\n".join(lines) + "\n"


# frozen-feature runs of the same systems (headline-features, seed 0), to
# compare the time to a dev score with fine-tuning's
FEATURE_RUNS = {"transformer/sampled_spancat_uniform": "features/sampled_spancat_uniform-s0", "transformer/ner": "features/ner-s0"}


def minutes_to(curve: List[List[float]], seconds: float, level: float) -> Optional[float]:
    """Minutes until the dev curve first reaches ``level``, the run's time
    spread evenly over its steps (evaluation included); None if it never does."""
    last = curve[-1][0] if curve else 0
    for step, score in curve:
        if score >= level and last:
            return seconds * step / last / 60
    return None


def features_table(names: List[str], folder: Path, corpus: str) -> str:
    """For each fine-tuning trial with a frozen-features run of the same
    system: the best dev macro-F1 of each and the minutes each took to reach
    it and the other's best (one CPU thread each; the features' first epoch,
    which fills the cache, is spread over all steps too)."""
    lines = [
        "| system | encoder | best dev macro-F1 | minutes to it | minutes to the other's best |",
        "| --- | --- | --: | --: | --: |",
    ]
    for name, trial in reports(names, folder):
        if trial is None:
            continue
        features_path = ROOT / "metrics" / corpus / f"{FEATURE_RUNS.get(trial['config'], '')}.json"
        if trial["overrides"] or trial["config"] not in FEATURE_RUNS or not features_path.exists():
            continue
        features = srsly.read_json(features_path)
        runs = [(f"fine-tuned ({name})", trial), (f"frozen features ({FEATURE_RUNS[trial['config']]})", features)]
        bests = [max(score for _, score in r["dev_curve"]) for _, r in runs]
        for i, (label, r) in enumerate(runs):
            to_best = minutes_to(r["dev_curve"], r["train_seconds"], bests[i])
            to_other = minutes_to(r["dev_curve"], r["train_seconds"], bests[1 - i])
            lines.append(
                f"| {trial['config'].split('/')[-1]} | {label} | {100 * bests[i]:.0f} | {to_best:.0f} | "
                f"{'never' if to_other is None else f'{to_other:.0f}'} |"
            )
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def plot(names: List[str], folder: Path, out: Path) -> bool:
    """Dev macro-F1 by epoch, one line per finished trial (the plots extra);
    False when matplotlib is missing or no trial has finished."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    runs = [(name, srsly.read_json(folder / f"{name}.json")) for name in names if (folder / f"{name}.json").exists()]
    if not runs:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, r in runs:
        curve = r.get("dev_curve") or []
        ax.plot([step / r["steps_per_epoch"] for step, _ in curve], [100 * score for _, score in curve], marker="o", label=name)
    ax.set_xlabel("epoch")
    ax.set_ylabel("dev macro-F1")
    ax.set_title("Fine-tuned all-MiniLM-L6-v2 on WNUT-2017 dev (seed 0)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def main(
    only: str = typer.Option("", "--only", help="Comma-separated trial names; empty: all"),
    table_only: bool = typer.Option(False, "--table", help="Write the summary only"),
    corpus: str = typer.Option("wnut17", "--corpus"),
) -> None:
    spec = srsly.read_yaml(TRIALS)
    names = list(spec["trials"])
    chosen = [n for n in names if n in {x.strip() for x in only.split(",") if x.strip()}] if only else names
    folder = ROOT / "metrics" / corpus / "transformer_trials"
    folder.mkdir(parents=True, exist_ok=True)
    if not table_only:
        for name in chosen:
            run(name, spec["trials"][name], spec["defaults"], ROOT / "corpus" / corpus, folder)
            (folder.parent / "transformer_trials.md").write_text(table(names, folder), encoding="utf8")
    text = table(names, folder)
    against = features_table(names, folder, corpus)
    if against:
        text += "\nFine-tuning against frozen features of the same model on the CPU (one thread each, seed 0):\n\n" + against
    if plot(names, folder, folder.parent / "transformer_trials.png"):
        text += f"\n![Dev macro-F1 by epoch](../../metrics/{corpus}/transformer_trials.png)\n"
    (folder.parent / "transformer_trials.md").write_text(text, encoding="utf8")
    print(text)


if __name__ == "__main__":
    typer.run(main)

"""The write-up of the fine-tuning trials: a row per trial with its dev
curve, fine-tuning against frozen features of the same model, and the plot
of the dev curves."""
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import srsly

from spacy_imbalance.benchmark.tables import head
from spacy_imbalance.plots import save_figure

# a trial's report (None: not run yet)
Report = Optional[Dict[str, Any]]


def _setting_name(key: str) -> str:
    # encoder_learn_rate.initial_rate reads better as encoder_learn_rate
    parts = key.split(".")
    return parts[-2] if parts[-1] == "initial_rate" else parts[-1]


def _value(value: Any) -> str:
    # YAML's 3.0e-4 arrives as 0.00030000000000000003
    return f"{value:g}" if isinstance(value, float) else str(value)


def reports(names: List[str], folder: Path) -> Iterator[Tuple[str, Report]]:
    """(name, report) of each trial in order; report None for one not run yet."""
    for name in names:
        path = folder / f"{name}.json"
        yield name, srsly.read_json(path) if path.exists() else None


def table(names: List[str], folder: Path) -> str:
    lines = head(
        ["trial", "config", "settings", "epochs", "dev macro-F1", "dev micro-F1", "best epoch", "dev macro-F1 per epoch", "minutes"],
        "lllrrrrlr",
    )
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


def features_table(root: Path, names: List[str], folder: Path, corpus: str) -> str:
    """For each fine-tuning trial with a frozen-features run of the same
    system: the best dev macro-F1 of each and the minutes each took to reach
    it and the other's best (one CPU thread each; the features' first epoch,
    which fills the cache, is spread over all steps too)."""
    lines = head(["system", "encoder", "best dev macro-F1", "minutes to it", "minutes to the other's best"], "llrrr")
    for name, trial in reports(names, folder):
        if trial is None:
            continue
        features_path = root / "metrics" / corpus / f"{FEATURE_RUNS.get(trial['config'], '')}.json"
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
    save_figure(fig, out, dpi=110)
    plt.close(fig)
    return True

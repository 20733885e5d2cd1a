"""Tune the decision thresholds of finished two_task_ner or sampled_spancat
runs on dev and score them again on test, as runs named <run>-tuned next to
the untuned ones.

For each run, training/<corpus>/<run>-s<seed>/model-best gets its thresholds
on corpus/<corpus>/dev.spacy from `spacy-imbalance tune-thresholds` (two_task_ner:
the entity and begin thresholds) or `spacy-imbalance calibrate` (sampled_spancat:
per-label thresholds, with a calibration report in training/.../calibration),
is saved as model-tuned, and is evaluated on the test split into
metrics/<corpus>/<run>-tuned-s<seed>.json (with the run's own fields and the
tuned thresholds). A run already tuned from the same training run is skipped.

    python scripts/tune_runs.py --corpus wnut17 --config two_task_auc --seed 0,1,2
"""
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import srsly
import typer

sys.path.insert(0, str(Path(__file__).parent))
from benchmark import parse_seeds, run_name, selected  # noqa: E402  (scripts/ is not a package)
from study_table import paired  # noqa: E402


# fields of the run that a tuned report copies; equal ones mean the same training run
KEEP = ("corpus", "config", "config_sha256", "seed", "max_steps", "overrides", "gpu_id", "train_seconds",
        "train_examples", "train_sentences", "size_factor")


def is_tuned(tuned: dict, original: dict, model: Path) -> bool:
    """Whether ``tuned`` was tuned from this very training run (same model
    folder, and the run not trained again since)."""
    return tuned.get("tuned_from") == str(model) and all(tuned.get(key) == original.get(key) for key in KEEP)


def tune_one(root: Path, corpus: str, run: str, seed: int, step: float, gpu_id: int) -> Path:
    model = root / "training" / corpus / f"{run}-s{seed}" / "model-best"
    source = root / "metrics" / corpus / f"{run}-s{seed}.json"
    metrics = root / "metrics" / corpus / f"{run}-tuned-s{seed}.json"
    if not model.exists() or not source.exists():
        raise typer.BadParameter(f"no finished run {run} seed {seed} on {corpus} ({model}, {source})")
    original = srsly.read_json(source)
    if metrics.exists() and is_tuned(srsly.read_json(metrics), original, model):
        print(f"{corpus} {run} seed {seed}: tuned before, skipped ({metrics})", flush=True)
        return metrics
    tuned = model.parent / "model-tuned"
    data = root / "corpus" / corpus
    cli = [sys.executable, "-m", "spacy_imbalance"]
    component = tuned_component(model)
    if component == "two_task_ner":
        command = ["tune-thresholds"]
    else:
        command = ["calibrate", "--report", str(model.parent / "calibration")]
    subprocess.run([*cli, *command, str(model), str(data / "dev.spacy"), "--output", str(tuned),
                    "--step", str(step), "--gpu-id", str(gpu_id)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*cli, "evaluate", str(tuned), str(data / "test.spacy"), "--output", str(metrics),
                    "--name", f"{run}-tuned", "--gpu-id", str(gpu_id)], check=True, stdout=subprocess.DEVNULL)
    cfg = srsly.read_json(tuned / component / "cfg")
    report = srsly.read_json(metrics)
    report.update({key: original[key] for key in KEEP if key in original})
    if component == "two_task_ner":
        thresholds = {"en": cfg["en_threshold"], "be": cfg["be_threshold"]}
        shown = f"en {cfg['en_threshold']:.2f} be {cfg['be_threshold']:.2f}"
    else:
        thresholds = cfg.get("thresholds") or {}
        calibration = srsly.read_json(model.parent / "calibration" / "calibration.json")
        report["ece"] = {name: table["ece"] for name, table in calibration["reliability"].items()}
        shown = ", ".join(f"{label} {value:.2f}" for label, value in sorted(thresholds.items())) or "argmax kept"
    report.update({"tuned_from": str(model), "thresholds": thresholds})
    srsly.write_json(metrics, report, indent=0)
    print(f"{corpus} {run} seed {seed}: thresholds {shown}, "
          f"test macro-F1 {100 * original['macro']['f']:.1f} -> {100 * report['macro']['f']:.1f}", flush=True)
    return metrics


def tuned_component(model: Path) -> str:
    """The component whose thresholds are tuned: two_task_ner or sampled_spancat."""
    pipeline = srsly.read_json(model / "meta.json").get("pipeline", [])
    for component in ("two_task_ner", "sampled_spancat"):
        if component in pipeline:
            return component
    raise typer.BadParameter(f"{model} has neither a two_task_ner nor a sampled_spancat component (its pipeline: {pipeline})")


def paired_table(root: Path, corpus: str, runs: List[str], reference: Optional[str] = None) -> str:
    """Each tuned run against its own untuned run (or, given ``reference``,
    against that system's untuned runs): mean difference over the seeds and a
    paired bootstrap interval (1,000 resamples of the test sentences)."""
    against = "argmax" if reference is None else reference
    lines = [
        f"| system | Δ macro-F1 (tuned − {against}) | 95 % CI | seeds |",
        "| --- | --: | --: | --: |",
    ]
    for run in runs:
        diff = paired(root, corpus, run, reference or run, "tuned", None)
        if diff is None:
            continue
        macro = diff["macro_f"]
        lines.append(f"| {run} | {100 * macro['delta']:+.1f} | [{100 * macro['low']:+.1f}, {100 * macro['high']:+.1f}] | {len(diff['seeds'])} |")
    return "\n".join(lines) + "\n"


def main(
    corpora: List[str] = typer.Option(..., "--corpus"),
    configs: List[str] = typer.Option(..., "--config"),
    seed_values: List[str] = typer.Option(["0,1,2"], "--seed", help="A seed or a comma-separated list, e.g. 0,1,2"),
    tag: Optional[str] = typer.Option(None, "--tag", help="The --tag the runs were trained with"),
    step: float = typer.Option(0.05, "--step", help="Threshold grid step"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
    summary: Optional[str] = typer.Option(None, "--summary", help="Also write metrics/<corpus>/NAME.md: untuned and tuned runs side by side"),
    only: str = typer.Option("", "--only", help="Comma-separated run names to tune, as benchmark.py --only; empty: all"),
    reference: Optional[str] = typer.Option(None, "--reference", help="Also pair each tuned run against this finished run (e.g. the best built-in) in the summary"),
    root: Path = typer.Option(Path("."), "--root"),
) -> None:
    seeds = parse_seeds(seed_values)
    runs = [run_name(config, tag) for config in configs]
    chosen = selected(configs, tag, only)
    if not chosen:
        print(f"--only {only}: no run to tune is selected", flush=True)
    for corpus in corpora:
        for config in chosen:
            for seed in seeds:
                tune_one(root, corpus, run_name(config, tag), seed, step, gpu_id)
        if summary is not None:
            # from every tuned run there is, not only those --only selected: a partial rerun
            # rewrites the same summary instead of shrinking it
            write_summary(root, corpus, runs, seeds, summary, reference)


def write_summary(root: Path, corpus: str, runs: List[str], seeds: List[int], name: str, reference: Optional[str]) -> Path:
    """metrics/<corpus>/NAME.md: the untuned and tuned runs side by side (each
    pair whose tuned report comes from that very training run), then the
    paired differences."""
    folder = root / "metrics" / corpus
    output = folder / f"{name}.md"
    files = []
    for run in runs:
        for seed in seeds:
            source, tuned = folder / f"{run}-s{seed}.json", folder / f"{run}-tuned-s{seed}.json"
            model = root / "training" / corpus / f"{run}-s{seed}" / "model-best"
            if source.exists() and tuned.exists() and is_tuned(srsly.read_json(tuned), srsly.read_json(source), model):
                files.extend([str(source), str(tuned)])
    if not files:
        output.write_text(f"No tuned run yet of {', '.join(runs)} on {corpus} (seeds {', '.join(map(str, seeds))}).\n",
                          encoding="utf8")
        return output
    subprocess.run([sys.executable, "-m", "spacy_imbalance", "summarize", *files, "--output", str(output)], check=True)
    with output.open("a", encoding="utf8") as f:
        f.write("\nPaired: each tuned run against its own untuned run.\n\n" + paired_table(root, corpus, runs))
        if reference is not None:
            f.write(f"\nPaired: each tuned run against `{reference}` (untuned: it has no thresholds to tune).\n\n"
                    + paired_table(root, corpus, runs, reference))
    return output


if __name__ == "__main__":
    typer.run(main)

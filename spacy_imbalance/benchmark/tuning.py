"""Decision thresholds of finished two_task_ner, sampled_spancat or spaCy
spancat_singlelabel runs, tuned on dev and scored again on test as runs
named <run>-tuned next to the untuned ones (``spacy-imbalance benchmark
tune``). spaCy's component carries no thresholds: its search is the one
``calibrate`` makes for ours (``evaluation.thresholds.builtin``) and its
tuned run is a score, with no model-tuned, so that a table tuning ours can
compare it with a built-in tuned alike."""
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import srsly

from .cells import bounds, signed
from .layout import Layout
from .paired import paired_by_seed
from .summary import write_summary as summarize_records
from .tables import head, row

# fields of the run that a tuned report copies; equal ones mean the same training run
KEEP = ("corpus", "config", "config_sha256", "seed", "max_steps", "overrides", "gpu_id", "train_seconds",
        "train_examples", "train_sentences", "size_factor")


def is_tuned(tuned: Dict[str, Any], original: Dict[str, Any], model: Path) -> bool:
    """Whether ``tuned`` was tuned from this very training run (same model
    folder, and the run not trained again since)."""
    return tuned.get("tuned_from") == str(model) and all(tuned.get(key) == original.get(key) for key in KEEP)


# the components whose thresholds can be tuned, as the shipped configs name them
TUNABLE = ("two_task_ner", "sampled_spancat", "spancat_singlelabel")


def tuned_component(model: Path) -> str:
    """The component whose thresholds are tuned: two_task_ner, sampled_spancat or spancat_singlelabel."""
    pipeline = srsly.read_json(model / "meta.json").get("pipeline", [])
    for component in TUNABLE:
        if component in pipeline:
            return component
    raise ValueError(f"{model} has none of the components with thresholds to tune ({', '.join(TUNABLE)}); its pipeline: {pipeline}")


def tune_one(layout: Layout, corpus: str, run: str, seed: int, step: float, gpu_id: int) -> Path:
    """Tune training/<corpus>/<run>-s<seed>/model-best on dev into
    model-tuned and evaluate it on test into metrics/<corpus>/<run>-tuned-s<seed>.json
    (skipped when tuned before from the same training run)."""
    from spacy_imbalance.sweeps.provenance import command_record

    model = layout.output(corpus, run, seed) / "model-best"
    source = layout.record(corpus, run, seed)
    metrics = layout.record(corpus, f"{run}-tuned", seed)
    if not model.exists() or not source.exists():
        raise ValueError(f"no finished run {run} seed {seed} on {corpus} ({model}, {source})")
    original = srsly.read_json(source)
    if metrics.exists() and is_tuned(srsly.read_json(metrics), original, model):
        print(f"{corpus} {run} seed {seed}: tuned before, skipped ({metrics})", flush=True)
        return metrics
    tuned = model.parent / "model-tuned"
    cli = [sys.executable, "-m", "spacy_imbalance"]
    component = tuned_component(model)
    if component == "spancat_singlelabel":
        report, thresholds = tune_builtin(model, layout.corpus(corpus, "dev"), layout.corpus(corpus, "test"), step, gpu_id)
        report.update({key: original[key] for key in KEEP if key in original})
        report.update({"name": f"{run}-tuned", "tuned_from": str(model), "thresholds": thresholds})
        srsly.write_json(metrics, report, indent=0)
        shown = ", ".join(f"{label} {value:.2f}" for label, value in sorted(thresholds.items())) or "argmax kept"
        print(f"{corpus} {run} seed {seed}: thresholds {shown}, "
              f"test macro-F1 {100 * original['macro']['f']:.1f} -> {100 * report['macro']['f']:.1f}", flush=True)
        return metrics
    if component == "two_task_ner":
        command = ["tune-thresholds"]
    else:
        command = ["calibrate", "--report", str(model.parent / "calibration")]
    subprocess.run([*cli, *command, str(model), str(layout.corpus(corpus, "dev")), "--output", str(tuned),
                    "--step", str(step), "--gpu-id", str(gpu_id)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*cli, "evaluate", str(tuned), str(layout.corpus(corpus, "test")), "--output", str(metrics),
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
    # the evaluation's provenance, with this command: the one that tunes and scores again
    report.update({"tuned_from": str(model), "thresholds": thresholds,
                   "provenance": {**report.get("provenance", {}), "command": command_record()}})
    srsly.write_json(metrics, report, indent=0)
    print(f"{corpus} {run} seed {seed}: thresholds {shown}, "
          f"test macro-F1 {100 * original['macro']['f']:.1f} -> {100 * report['macro']['f']:.1f}", flush=True)
    return metrics


def tune_builtin(model: Path, dev: Path, test: Path, step: float, gpu_id: int) -> Tuple[Dict[str, Any], Dict[str, float]]:
    """spaCy's spancat_singlelabel of ``model`` with per-label thresholds
    searched on ``dev`` as ``calibrate`` searches ours, and the evaluation
    report of ``test`` decided with them (with the data, its SHA-256 and the
    provenance an evaluation records); the thresholds."""
    import hashlib

    import spacy

    from ..corpus.docs_io import load_docs
    from ..evaluation.thresholds.builtin import tune_and_score
    from ..evaluation.thresholds.grid import default_grid
    from ..sweeps.provenance import run_provenance

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    nlp = spacy.load(model)
    search, report = tune_and_score(nlp, "spancat_singlelabel", load_docs(dev), load_docs(test), grid=default_grid(step))
    report.update({"model": str(model), "data": str(test), "data_sha256": hashlib.sha256(test.read_bytes()).hexdigest(),
                   "dev_macro_f": {"argmax": search.current_macro_f, "tuned": search.best_macro_f},
                   "provenance": run_provenance(gpu_id)})
    return report, dict(search.best)


def paired_table(folder: Path, runs: List[str], reference: Optional[str] = None) -> str:
    """Each tuned run against its own untuned run (or, given ``reference``,
    against that system's untuned runs): mean difference over the seeds and a
    paired bootstrap interval (1,000 resamples of the test sentences); the
    records are read from ``folder`` (metrics/<corpus>)."""
    against = "argmax" if reference is None else reference
    lines = head(["system", f"Δ macro-F1 (tuned − {against})", "95 % CI", "seeds"], "lrrr")
    for run in runs:
        diff = paired_by_seed(folder, run, reference or run, "tuned", None)
        if diff is None:
            continue
        macro = diff["macro_f"]
        lines.append(row([run, signed(macro["delta"]), bounds(macro), str(len(diff["seeds"]))]))
    return "\n".join(lines) + "\n"


def write_summary(layout: Layout, corpus: str, runs: List[str], seeds: List[int], name: str, reference: Optional[str]) -> Path:
    """metrics/<corpus>/NAME.md: the untuned and tuned runs side by side (each
    pair whose tuned report comes from that very training run), then the
    paired differences."""
    folder = layout.metrics / corpus
    output = folder / f"{name}.md"
    files: List[Path] = []
    for run in runs:
        for seed in seeds:
            source, tuned = folder / f"{run}-s{seed}.json", folder / f"{run}-tuned-s{seed}.json"
            model = layout.output(corpus, run, seed) / "model-best"
            if source.exists() and tuned.exists() and is_tuned(srsly.read_json(tuned), srsly.read_json(source), model):
                files.extend([source, tuned])
    if not files:
        output.write_text(f"No tuned run yet of {', '.join(runs)} on {corpus} (seeds {', '.join(map(str, seeds))}).\n",
                          encoding="utf8")
        return output
    print(summarize_records(files, output, None, ""))
    with output.open("a", encoding="utf8") as f:
        f.write("\nPaired: each tuned run against its own untuned run.\n\n" + paired_table(folder, runs))
        if reference is not None:
            f.write(f"\nPaired: each tuned run against `{reference}` untuned.\n\n" + paired_table(folder, runs, reference))
            if any((folder / f"{reference}-tuned-s{seed}.json").exists() for seed in seeds):
                # like with like: the built-in's thresholds searched on dev as ours are
                f.write(f"\nPaired: each tuned run against `{reference}` tuned alike.\n\n"
                        + paired_table(folder, runs, f"{reference}-tuned"))
    return output
